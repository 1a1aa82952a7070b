#include "backends/cuda/json_line.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace vramsim::gpu {

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", u);
          out += buf;
        } else {
          out.push_back(c);  // UTF-8 passes through, as nlohmann's dump() does
        }
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  if (ec != std::errc()) return "null";
  std::string out(buf, end);
  // nlohmann marks a whole double as a float: 312 -> 312.0.
  if (out.find_first_of(".eE") == std::string::npos) out += ".0";
  return out;
}

void JsonLine::key(std::string_view k) {
  if (body_.size() > 1) body_ += ",";
  body_ += json_string(k);
  body_ += ":";
}

JsonLine& JsonLine::str(std::string_view k, std::string_view value) {
  key(k);
  body_ += json_string(value);
  return *this;
}

JsonLine& JsonLine::num(std::string_view k, double value) {
  key(k);
  body_ += json_number(value);
  return *this;
}

JsonLine& JsonLine::num(std::string_view k, const std::optional<double>& value) {
  return value ? num(k, *value) : null(k);
}

JsonLine& JsonLine::integer(std::string_view k, std::int64_t value) {
  key(k);
  body_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::integer(std::string_view k, const std::optional<std::int64_t>& value) {
  return value ? integer(k, *value) : null(k);
}

JsonLine& JsonLine::boolean(std::string_view k, const std::optional<bool>& value) {
  key(k);
  body_ += value ? (*value ? "true" : "false") : "null";
  return *this;
}

JsonLine& JsonLine::null(std::string_view k) {
  key(k);
  body_ += "null";
  return *this;
}

JsonLine& JsonLine::raw(std::string_view k, std::string_view json) {
  key(k);
  body_ += json;
  return *this;
}

}  // namespace vramsim::gpu
