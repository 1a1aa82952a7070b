#pragma once
// The scenario parser's field reader, shared by the parsers of each section
// (scenario_parse.hpp): one JSON object read with its path, every value
// checked against its documented range before use, unknown fields refused.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/format.hpp"
#include "scenario/scenario.hpp"

namespace vramsim::scenario_fields {

// "an object", "a string", ... for messages.
const char* type_name(const Json& j);

// Reads one JSON object, tracking its path and refusing unknown fields.
class Obj {
 public:
  Obj(const Json& j, std::string path, const std::string& file) : j_(j), path_(std::move(path)), file_(file) {
    if (!j_.is_object()) fail(path_, "expected an object, got " + std::string(type_name(j_)));
  }
  [[noreturn]] void fail(const std::string& path, const std::string& problem) const {
    throw ScenarioError(file_, path, problem);
  }
  std::string at(const std::string& key) const { return path_ + "." + key; }
  const Json* get(const std::string& key) {
    seen_.insert(key);
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  bool has(const std::string& key) const { return j_.contains(key); }
  // Integers are checked against [min, max] on the value as written, before
  // any narrowing; the message quotes the JSON text, never a wrapped value.
  std::int64_t integer(const std::string& key, std::int64_t def, std::int64_t min, std::int64_t max) {
    const Json* v = get(key);
    if (!v) return def;
    return integer_value(*v, at(key), min, max);
  }
  std::int64_t integer_value(const Json& v, const std::string& path, std::int64_t min, std::int64_t max) const {
    if (!v.is_number_integer()) fail(path, "expected an integer, got " + std::string(type_name(v)));
    bool ok = false;
    std::int64_t x = 0;
    if (v.is_number_unsigned()) {
      const std::uint64_t u = v.get<std::uint64_t>();
      ok = max >= 0 && u <= static_cast<std::uint64_t>(max);
      x = ok ? static_cast<std::int64_t>(u) : 0;
      ok = ok && x >= min;
    } else {
      x = v.get<std::int64_t>();
      ok = x >= min && x <= max;
    }
    if (!ok)
      fail(path, "expected an integer in [" + std::to_string(min) + ", " +
                     (max == std::numeric_limits<std::int64_t>::max() ? std::string("inf") : std::to_string(max)) +
                     "], got " + v.dump());
    return x;
  }
  double number(const std::string& key, double def, double min, double max) {
    const Json* v = get(key);
    if (!v) return def;
    if (!v->is_number()) fail(at(key), "expected a number, got " + std::string(type_name(*v)));
    const double x = v->get<double>();
    if (!std::isfinite(x) || x < min || x > max)
      fail(at(key), "expected a number in [" + format_number(min) + ", " + format_number(max) + "], got " +
                        v->dump());
    return x;
  }
  bool boolean(const std::string& key, bool def) {
    const Json* v = get(key);
    if (!v) return def;
    if (!v->is_boolean()) fail(at(key), "expected true or false, got " + std::string(type_name(*v)));
    return v->get<bool>();
  }
  std::string string(const std::string& key, const std::string& def) {
    const Json* v = get(key);
    if (!v) return def;
    if (!v->is_string()) fail(at(key), "expected a string, got " + std::string(type_name(*v)));
    return v->get<std::string>();
  }
  Duration duration(const std::string& key, Duration def, Duration max = limits::kMaxDuration) {
    const Json* v = get(key);
    if (!v) return def;
    return parse_duration_value(*v, at(key), max);
  }
  // A duration is bounded before it is converted, so a huge number of
  // seconds cannot overflow the microsecond count.
  Duration parse_duration_value(const Json& v, const std::string& path,
                                Duration max = limits::kMaxDuration) const {
    const std::string range = "a non-negative duration up to " + format_duration(max);
    if (v.is_number()) {
      const double s = v.get<double>();
      if (!std::isfinite(s) || s < 0 || s > to_seconds(max)) fail(path, "expected " + range + ", got " + v.dump());
      return seconds(s);
    }
    if (!v.is_string())
      fail(path, "expected a duration such as \"90s\", \"5m\" or \"4:00:00\", got " + std::string(type_name(v)));
    auto d = parse_duration(v.get<std::string>());
    if (!d)
      fail(path, "expected a non-negative duration such as \"90s\", \"5m\" or \"4:00:00\", got \"" +
                     v.get<std::string>() + "\"");
    if (*d > max) fail(path, "expected " + range + ", got \"" + v.get<std::string>() + "\"");
    return *d;
  }
  // Unknown fields are errors: a typo must not silently become a default.
  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (!seen_.count(it.key())) {
        std::string known;
        for (const auto& k : seen_) known += (known.empty() ? "" : ", ") + k;
        fail(at(it.key()), "unknown field (expected one of: " + known + ")");
      }
  }
  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }

 private:
  const Json& j_;
  std::string path_;
  const std::string& file_;
  std::set<std::string> seen_;
};

// "a, b or c".
std::string one_of(const std::vector<std::string>& names);
// A string field that must be one of `allowed`; `what` names it in the message.
std::string enum_field(Obj& o, const std::string& key, const std::vector<std::string>& allowed,
                       const std::string& what);
std::optional<std::string> opt_string(Obj& o, const std::string& key);
std::optional<double> opt_number(Obj& o, const std::string& key);
Json object_field(Obj& o, const std::string& key);
// A GPU model of the partition catalogue (gpu_catalogue()), or fail at path.
const GpuModelInfo& lookup_gpu(const Obj& o, const std::string& path, const std::string& name);
// A latency: a duration (fixed) or {dist, ...}; absent keeps def.
LatencyModel parse_latency(Obj& parent, const std::string& key, const LatencyModel& def);

}  // namespace vramsim::scenario_fields
