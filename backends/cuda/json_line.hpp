#pragma once

// A one-line JSON object writer for the probe's output, standard library
// only so the probe builds without a JSON library (tools/probe/standalone).
// Numbers print as nlohmann::json prints them (shortest round trip, ".0" on
// whole numbers, null for NaN and infinities), so the project's
// nlohmann views of the same values (json_bridge.cpp) dump identically.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vramsim::gpu {

std::string json_string(std::string_view text);  // quoted and escaped
std::string json_number(double value);

class JsonLine {
 public:
  JsonLine& str(std::string_view key, std::string_view value);
  JsonLine& num(std::string_view key, double value);
  JsonLine& num(std::string_view key, const std::optional<double>& value);  // null when empty
  JsonLine& integer(std::string_view key, std::int64_t value);
  JsonLine& integer(std::string_view key, const std::optional<std::int64_t>& value);
  JsonLine& boolean(std::string_view key, const std::optional<bool>& value);
  JsonLine& null(std::string_view key);
  JsonLine& raw(std::string_view key, std::string_view json);  // an already-written value
  std::string done() const { return body_ + "}"; }

 private:
  void key(std::string_view k);
  std::string body_ = "{";
};

}  // namespace vramsim::gpu
