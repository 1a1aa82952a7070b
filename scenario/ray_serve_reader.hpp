#pragma once
// Reading a Ray Serve config file's YAML as the importer needs it: typed
// fields with errors that name the file, the line and the YAML path, and
// notes on what the import leaves out, one line per kind of note. Internal
// to scenario/ (ray_serve_import.cpp, bioengine_app.cpp).
#include <map>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "scenario/yaml_document.hpp"

namespace vramsim::ray_serve_detail {

inline const char* kind_of(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "a list";
  return "a mapping";
}

class ServeConfigReader {
 public:
  ServeConfigReader(const YamlDocument& doc, const std::string& file, std::vector<std::string>& notes)
      : doc_(doc), file_(file), notes_(notes) {}

  [[noreturn]] void fail(const std::string& path, const std::string& problem) const {
    throw ScenarioError(file_, doc_.where(path), problem);
  }
  // Notes are grouped by what they say: one line each, listing where.
  void note(const std::string& path, const std::string& text) {
    auto [it, fresh] = note_index_.emplace(text, notes_.size());
    if (fresh) notes_.push_back(text + ": " + doc_.where(path));
    else notes_[it->second] += ", " + doc_.where(path);
  }
  std::string where(const std::string& path) const { return doc_.where(path); }

  static std::string at(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  const Json& mapping(const Json& v, const std::string& path) const {
    if (!v.is_object()) fail(path, std::string("expected a mapping, got ") + kind_of(v));
    return v;
  }

  // A number (an integer or a float; YAML booleans are refused) within
  // [min, max], the lower bound open where `open_min`.
  // Ray's pydantic reads a string that spells a number as that number (lax
  // mode): PyYAML leaves "1e3" a string, and Ray takes it as 1000.
  static std::optional<Json> numeric_string(const Json& v, bool integer) {
    if (!v.is_string()) return std::nullopt;
    const std::string t = v.get<std::string>();
    static const std::regex int_re("^\\s*[-+]?[0-9]+\\s*$");
    static const std::regex float_re("^\\s*[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?\\s*$");
    if (std::regex_match(t, int_re)) {
      errno = 0;
      const long long x = std::strtoll(t.c_str(), nullptr, 10);
      if (errno == 0) return Json(static_cast<std::int64_t>(x));
    }
    if (!integer && std::regex_match(t, float_re)) return Json(std::strtod(t.c_str(), nullptr));
    return std::nullopt;
  }

  double number(const Json& given, const std::string& path, double min, double max, bool open_min) const {
    const auto parsed = numeric_string(given, false);
    const Json& v = parsed ? *parsed : given;
    if (!v.is_number()) fail(path, std::string("expected a number, got ") + kind_of(v));
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < min || (open_min && x <= min) || x > max)
      fail(path, std::string("expected a number ") + (open_min ? "> " : ">= ") + format_number(min) +
                     (std::isfinite(max) ? " and <= " + format_number(max) : "") + ", got " +
                     (std::isnan(x) ? std::string("nan") : std::isinf(x) ? std::string(x > 0 ? "inf" : "-inf") : v.dump()));
    return x;
  }
  // An integer (pydantic also takes a float with no fraction) within [min, max].
  std::int64_t integer(const Json& given, const std::string& path, std::int64_t min, std::int64_t max) const {
    const auto parsed = numeric_string(given, true);
    const Json& v = parsed ? *parsed : given;
    if (!v.is_number() || (v.is_number_float() && v.get<double>() != std::floor(v.get<double>())))
      fail(path, std::string("expected an integer, got ") + (v.is_number() ? v.dump() : kind_of(v)));
    const double x = v.get<double>();
    if (x < static_cast<double>(min) || x > static_cast<double>(max))
      fail(path, "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + v.dump());
    return v.is_number_float() ? static_cast<std::int64_t>(x) : v.get<std::int64_t>();
  }
  std::string string(const Json& v, const std::string& path) const {
    if (!v.is_string()) fail(path, std::string("expected a string, got ") + kind_of(v));
    return v.get<std::string>();
  }

  // Ray's LoggingConfig forbids unknown keys (schema.py:124): so does the import.
  void logging_config(const Json& v, const std::string& path) {
    if (v.is_null()) return;
    mapping(v, path);
    static const std::set<std::string> keys = {"encoding", "log_level", "logs_dir", "enable_access_log",
                                               "additional_log_standard_attrs"};
    for (auto it = v.begin(); it != v.end(); ++it)
      if (!keys.count(it.key()))
        fail(at(path, it.key()), "unknown field of Ray's LoggingConfig, which refuses unknown fields (expected one of "
                                 "encoding, log_level, logs_dir, enable_access_log, additional_log_standard_attrs)");
    if (v.contains("encoding")) {
      const std::string e = string(v["encoding"], at(path, "encoding"));
      if (e != "TEXT" && e != "JSON") fail(at(path, "encoding"), "expected TEXT or JSON, got \"" + e + "\"");
    }
    note(path, "read, not modelled");
  }

 private:
  const YamlDocument& doc_;
  const std::string& file_;
  std::vector<std::string>& notes_;
  std::map<std::string, std::size_t> note_index_;
};

}  // namespace vramsim::ray_serve_detail
