#include "scenario/scenario_fields.hpp"

#include <algorithm>

namespace vramsim::scenario_fields {

const char* type_name(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    default: return "an unsupported value";
  }
}

const GpuModelInfo& lookup_gpu(const Obj& o, const std::string& path, const std::string& name) {
  auto it = gpu_catalogue().find(name);
  if (it == gpu_catalogue().end()) {
    std::string known;
    for (const auto& [k, _] : gpu_catalogue()) known += (known.empty() ? "" : ", ") + k;
    o.fail(path, "unknown GPU model '" + name + "' (expected one of: " + known + ")");
  }
  return it->second;
}

LatencyModel parse_latency(Obj& parent, const std::string& key, const LatencyModel& def) {
  const Json* v = parent.get(key);
  if (!v) return def;
  const std::string path = parent.at(key);
  if (!v->is_object()) return LatencyModel::fixed(parent.parse_duration_value(*v, path));
  Obj o(*v, path, parent.file());
  LatencyModel m;
  const std::string dist = o.string("dist", "fixed");
  if (dist == "fixed") {
    m.kind = LatencyModel::Kind::Fixed;
    m.value = o.duration("value", 0);
  } else if (dist == "exponential") {
    m.kind = LatencyModel::Kind::Exponential;
    m.mean = o.duration("mean", 0);
  } else if (dist == "lognormal") {
    m.kind = LatencyModel::Kind::Lognormal;
    m.median = o.duration("median", 0);
    m.sigma = o.number("sigma", 0.5, 0, limits::kMaxSigma);
    if (m.median <= 0) o.fail(o.at("median"), "expected a positive duration");
  } else if (dist == "uniform") {
    m.kind = LatencyModel::Kind::Uniform;
    m.lo = o.duration("min", 0);
    m.hi = o.duration("max", 0);
    if (m.hi < m.lo) o.fail(o.at("max"), "expected max >= min");
  } else if (dist == "empirical") {
    m.kind = LatencyModel::Kind::Empirical;
    const Json* s = o.get("samples");
    if (!s || !s->is_array() || s->empty())
      o.fail(o.at("samples"), "expected a non-empty array of durations");
    for (std::size_t i = 0; i < s->size(); ++i)
      m.samples.push_back(o.parse_duration_value((*s)[i], o.at("samples") + "[" + std::to_string(i) + "]"));
  } else {
    o.fail(o.at("dist"), "unknown distribution '" + dist +
                             "' (expected one of: fixed, exponential, lognormal, uniform, empirical)");
  }
  o.finish();
  return m;
}

std::string one_of(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return s;
}

std::string enum_field(Obj& o, const std::string& key, const std::vector<std::string>& allowed,
                       const std::string& what) {
  const Json* v = o.get(key);
  if (!v) o.fail(o.at(key), "expected " + what + ": " + one_of(allowed) + "; the field is missing");
  if (!v->is_string()) o.fail(o.at(key), "expected " + what + " (a string), got " + type_name(*v));
  const std::string x = v->get<std::string>();
  if (std::find(allowed.begin(), allowed.end(), x) == allowed.end())
    o.fail(o.at(key), "expected " + what + ": " + one_of(allowed) + "; got \"" + x + "\"");
  return x;
}

std::optional<std::string> opt_string(Obj& o, const std::string& key) {
  if (!o.has(key)) { o.get(key); return std::nullopt; }
  return o.string(key, "");
}

std::optional<double> opt_number(Obj& o, const std::string& key) {
  const Json* v = o.get(key);
  if (!v) return std::nullopt;
  if (!v->is_number() || !std::isfinite(v->get<double>()))
    o.fail(o.at(key), "expected a number, got " + std::string(type_name(*v)));
  return v->get<double>();
}

Json object_field(Obj& o, const std::string& key) {
  const Json* v = o.get(key);
  if (!v->is_object()) o.fail(o.at(key), "expected an object, got " + std::string(type_name(*v)));
  return *v;
}

}  // namespace vramsim::scenario_fields
