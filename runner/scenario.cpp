#include "runner/scenario.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include "engine/format.hpp"
#include "runner/background.hpp"
#include "workload/swf.hpp"
#include "models/gpu_models.hpp"
#include "models/policy_set.hpp"
#include "runner/openb_scenario.hpp"
#include "models/registry.hpp"

namespace vramsim {

std::string ray_accelerator_type(const std::string& name) {
  // Ray's rule, the pattern \w+\s+([A-Z0-9]+) from the start of the name:
  // the first run of capitals and digits after the vendor word, so
  // "NVIDIA GeForce RTX 3090" reads "G" and "Tesla T4" reads "T4".
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::size_t i = 0;
  while (i < name.size() && word(name[i])) ++i;
  if (i == 0) return "";
  const std::size_t spaces = i;
  while (i < name.size() && std::isspace(static_cast<unsigned char>(name[i]))) ++i;
  if (i == spaces) return "";
  const std::size_t start = i;
  while (i < name.size() && (std::isupper(static_cast<unsigned char>(name[i])) ||
                             std::isdigit(static_cast<unsigned char>(name[i]))))
    ++i;
  return name.substr(start, i - start);
}

const std::map<std::string, GpuModelInfo>& gpu_catalogue() {
  // The models a partition node may name; their figures come from the GPU
  // model table (models/gpu_models.hpp).
  static const std::map<std::string, GpuModelInfo> c = [] {
    const char* names[] = {"A100-SXM4-40GB", "A100-SXM4-80GB", "A10", "H100-SXM5-80GB", "H200",
                           "L40S", "RTX3090", "T4", "V100-SXM2-16GB", "V100-SXM2-32GB"};
    std::map<std::string, GpuModelInfo> out;
    for (const char* n : names) {
      const GpuModel* m = find_gpu_model(n);
      if (!m) throw std::logic_error(std::string("gpu_catalogue: ") + n + " missing from the GPU model table");
      out[n] = GpuModelInfo{m->device_name, ray_accelerator_type(m->device_name), m->vram_mb};
    }
    return out;
  }();
  return c;
}

// One JSON document from a file, with the scenario's own limits and checks;
// throws ScenarioError naming the file.
Json read_json_file(const std::string& path);

namespace {

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

// Every cluster.latency field, read from a scenario's block or a calibrated
// model's (`vramsim calibrate`); fields absent keep their current value.
void parse_latency_fields(Obj& lo, Scenario& s, ControlConfig& cc) {
  s.slurm.queue_wait = parse_latency(lo, "queue_wait", s.slurm.queue_wait);
  s.slurm.node_boot = parse_latency(lo, "node_boot", s.slurm.node_boot);
  s.slurm.registration = parse_latency(lo, "registration", s.slurm.registration);
  s.slurm.ray_stop = parse_latency(lo, "ray_stop", s.slurm.ray_stop);
  s.slurm.cancel_latency = parse_latency(lo, "cancel", s.slurm.cancel_latency);
  s.slurm.job_exit_after_stop = parse_latency(lo, "job_exit_after_stop", s.slurm.job_exit_after_stop);
  s.slurm.call = parse_latency(lo, "call", s.slurm.call);
  cc.runtime_env_install = parse_latency(lo, "runtime_env_install", cc.runtime_env_install);
  cc.replica_init = parse_latency(lo, "replica_init", cc.replica_init);
}

// `latency.from`: a path relative to the scenario file's folder.
std::string latency_model_path(const Obj& lo, const Json& from) {
  if (!from.is_string() || from.get<std::string>().empty())
    lo.fail(lo.at("from"), "expected the path of a calibrated latency model (vramsim calibrate -o FILE)");
  const std::filesystem::path p(from.get<std::string>());
  if (p.is_absolute()) return p.string();
  return (std::filesystem::path(lo.file()).parent_path() / p).string();
}

AppSpec parse_app(Obj& o, const AppSpec* base) {
  AppSpec a = base ? *base : AppSpec{};
  a.id = o.string("id", a.id);
  if (a.id.empty()) o.fail(o.at("id"), "expected a non-empty app id");
  if (const Json* g = o.get("gpu_memory_mb")) {
    if (g->is_null()) a.gpu_memory_mb.reset();
    else if (!g->is_number_integer())
      o.fail(o.at("gpu_memory_mb"), "expected an integer number of MB >= 0, or -1 for a whole GPU, got " +
                                        std::string(type_name(*g)));
    else a.gpu_memory_mb = o.integer_value(*g, o.at("gpu_memory_mb"), -1, limits::kMaxVramMb);
  }
  a.disable_gpu = o.boolean("disable_gpu", a.disable_gpu);
  a.cpus = o.number("cpus", a.cpus, 0, static_cast<double>(limits::kMaxCpus));
  // Bounded in MB first, so the byte count cannot overflow.
  a.memory_bytes = o.integer("memory_mb", a.memory_bytes / (1024 * 1024), 0, limits::kMaxMemoryMb) * 1024 * 1024;
  a.replicas = static_cast<int>(o.integer("replicas", a.replicas, 1, limits::kMaxReplicas));
  if (o.has("observed_vram_mb")) a.observed_vram_mb = o.integer("observed_vram_mb", 0, 0, limits::kMaxVramMb);
  a.kind = o.string("kind", a.kind);
  if (a.kind != "plain" && a.kind != "probe")
    o.fail(o.at("kind"), "expected \"plain\" or \"probe\", got \"" + a.kind + "\"");
  return a;
}

const std::vector<std::string> kAppStates = {"NOT_STARTED", "DEPLOYING", "RUNNING", "DEPLOY_FAILED",
                                              "UNHEALTHY", "DELETING", "DELETED"};
const std::vector<std::string> kMetrics = {"jobs_submitted", "jobs_cancelled", "jobs_left", "jobs_timeout",
                                           "orphaned_job_seconds", "scale_ups", "scale_downs",
                                           "device_overbookings", "sbatch_refusals", "pending_forever",
                                           "gpu_fragmentation", "gpu_fragmentation_share", "gpu_allocation",
                                           "sampled_vram_utilisation"};
const std::vector<std::string> kInvariants = {"max_worker_jobs", "device_vram_within_total",
                                              "no_jobs_after_shutdown"};

std::string one_of(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return s;
}

std::string enum_field(Obj& o, const std::string& key, const std::vector<std::string>& allowed,
                       const std::string& what) {
  const Json* v = o.get(key);
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

EventPattern parse_pattern(const Json& j, const std::string& path, const std::string& file) {
  Obj o(j, path, file);
  EventPattern p;
  if (!o.has("event")) o.fail(o.at("event"), "expected an event kind (a string)");
  p.event = o.string("event", "");
  if (p.event.empty()) o.fail(o.at("event"), "expected a non-empty event kind");
  if (o.has("match")) p.match = object_field(o, "match");
  o.finish();
  return p;
}

// Reads and type-checks one expectation; every field is checked here, once,
// so that a run never meets a value of the wrong type.
Expectation parse_expectation(const Json& e, const std::string& path, const std::string& file,
                              const std::map<std::string, AppSpec>& apps) {
  Obj o(e, path, file);
  Expectation x;
  x.json_path = path;
  static const std::vector<std::pair<const char*, Expectation::Kind>> kinds = {
      {"app", Expectation::Kind::App},
      {"event", Expectation::Kind::Event},
      {"metric", Expectation::Kind::Metric},
      {"invariant", Expectation::Kind::Invariant},
      {"status_line", Expectation::Kind::StatusLine}};
  int n_kinds = 0;
  for (const auto& [key, kind] : kinds)
    if (o.has(key)) { x.kind = kind; ++n_kinds; }
  if (n_kinds != 1)
    o.fail(path, std::string(n_kinds == 0 ? "an expectation needs" : "an expectation takes exactly") +
                     " one of \"app\", \"event\", \"metric\", \"invariant\" or \"status_line\"");
  x.name = o.string("name", "");
  // The fields each kind takes; any other field is refused by name.
  std::vector<std::string> fields = {"name"};
  auto takes = [&](std::initializer_list<const char*> keys) { fields.insert(fields.end(), keys.begin(), keys.end()); };
  if (o.has("within")) x.within = o.duration("within", 0);
  switch (x.kind) {
    case Expectation::Kind::App: {
      takes({"app", "state", "within", "at_end", "admitted", "message", "message_contains", "reservation"});
      x.app = o.string("app", "");
      if (!apps.count(x.app)) o.fail(o.at("app"), "unknown app '" + x.app + "' (declare it in $.apps)");
      if (o.has("state")) x.state = enum_field(o, "state", kAppStates, "an app state");
      x.at_end = o.boolean("at_end", false);
      if (o.has("admitted")) x.admitted = o.boolean("admitted", false);
      x.message = opt_string(o, "message");
      x.message_contains = opt_string(o, "message_contains");
      if (x.message && x.message_contains)
        o.fail(o.at("message_contains"), "expected one of \"message\" or \"message_contains\", not both");
      if (o.has("reservation")) x.reservation = object_field(o, "reservation");
      if (!x.state && !x.admitted && !x.message && !x.message_contains && !x.reservation)
        o.fail(path, "an app expectation must check something: give \"state\", \"admitted\", \"message\", "
                     "\"message_contains\" or \"reservation\"");
      if (x.within && !x.state) o.fail(o.at("within"), "\"within\" needs \"state\" (the state to reach in time)");
      if (o.has("at_end") && !x.state) o.fail(o.at("at_end"), "\"at_end\" needs \"state\"");
      if (!x.within && o.has("at_end") && !x.at_end)
        o.fail(o.at("at_end"), "\"at_end\": false needs \"within\" (else the state is checked nowhere)");
      if (!x.within) x.at_end = true;  // a state with no deadline is the final state
      break;
    }
    case Expectation::Kind::Event: {
      takes({"event", "match", "within", "after", "before", "count", "min_count", "max_count"});
      x.pattern.event = o.string("event", "");
      if (x.pattern.event.empty()) o.fail(o.at("event"), "expected a non-empty event kind");
      if (o.has("match")) x.pattern.match = object_field(o, "match");
      if (o.has("after")) x.after = parse_pattern(*o.get("after"), o.at("after"), file);
      if (o.has("before")) x.before = parse_pattern(*o.get("before"), o.at("before"), file);
      if (x.after && x.before) o.fail(o.at("before"), "expected one of \"after\" or \"before\", not both");
      if (x.before && x.within)
        o.fail(o.at("within"), "\"within\" does not apply with \"before\" (use \"after\" for a deadline)");
      const bool count = o.has("count"), lo = o.has("min_count"), hi = o.has("max_count");
      if (count && (lo || hi))
        o.fail(o.at("count"), "expected \"count\" alone, or \"min_count\" and/or \"max_count\"");
      if (count) x.min_count = x.max_count = o.integer("count", 0, 0, std::numeric_limits<std::int64_t>::max());
      if (hi) { x.max_count = o.integer("max_count", 0, 0, std::numeric_limits<std::int64_t>::max()); x.min_count = 0; }
      if (lo) x.min_count = o.integer("min_count", 0, 0, std::numeric_limits<std::int64_t>::max());
      if (x.min_count > x.max_count)
        o.fail(o.at("max_count"), "expected max_count >= min_count (" + std::to_string(x.min_count) + "), got " +
                                      std::to_string(x.max_count));
      break;
    }
    case Expectation::Kind::Metric: {
      takes({"metric", "equals", "min", "max"});
      x.metric = enum_field(o, "metric", kMetrics, "a metric");
      x.equals = opt_number(o, "equals");
      x.min = opt_number(o, "min");
      x.max = opt_number(o, "max");
      if (!x.equals && !x.min && !x.max)
        o.fail(path, "a metric expectation must compare: give \"equals\", \"min\" or \"max\"");
      if (x.min && x.max && *x.min > *x.max) o.fail(o.at("max"), "expected max >= min");
      break;
    }
    case Expectation::Kind::Invariant: {
      takes({"invariant", "max"});
      x.invariant = enum_field(o, "invariant", kInvariants, "an invariant");
      if (x.invariant == "max_worker_jobs") {
        if (!o.has("max")) o.fail(o.at("max"), "max_worker_jobs needs \"max\", a non-negative integer");
        x.max = static_cast<double>(o.integer("max", 0, 0, std::numeric_limits<std::int64_t>::max()));
      }
      break;
    }
    case Expectation::Kind::StatusLine: {
      takes({"status_line"});
      Obj so(*o.get("status_line"), o.at("status_line"), file);
      x.node = so.string("node", "");
      if (x.node.empty()) so.fail(so.at("node"), "expected a node id such as \"node-1\" (a string)");
      x.contains = so.string("contains", "");
      if (x.contains.empty()) so.fail(so.at("contains"), "expected the text the line must contain (a string)");
      if (!so.has("at")) so.fail(so.at("at"), "expected the time of the status, such as \"200s\"");
      x.at = so.duration("at", 0);
      so.finish();
      break;
    }
  }
  for (auto it = e.begin(); it != e.end(); ++it)
    if (std::find(fields.begin(), fields.end(), it.key()) == fields.end())
      o.fail(o.at(it.key()), "field does not apply to this kind of expectation (expected one of: " +
                                 one_of(fields) + ")");
  o.finish();
  return x;
}

}  // namespace

Scenario parse_scenario(const Json& doc, const std::string& file) {
  Scenario s;
  s.file = file;
  Obj root(doc, "$", file);
  s.name = root.string("name", "");
  s.description = root.string("description", "");
  if (const Json* seed = root.get("seed")) {
    // The whole unsigned 64-bit range, as --seed takes it.
    if (!seed->is_number_unsigned())
      root.fail(root.at("seed"), "expected an integer in [0, 18446744073709551615], got " +
                                     (seed->is_number() ? seed->dump() : std::string(type_name(*seed))));
    s.seed = seed->get<std::uint64_t>();
  }
  s.horizon = root.duration("horizon", s.horizon, limits::kMaxHorizon);

  if (const Json* p = root.get("policies")) {
    std::string spec;
    if (p->is_string()) {
      spec = p->get<std::string>();
    } else if (p->is_object()) {
      Obj po(*p, root.at("policies"), file);
      spec = po.string("preset", "fixed");
      for (const auto& m : policy_models()) {
        std::string v = po.string(m, "");
        if (!v.empty()) spec += "," + m + "=" + v;
      }
      po.finish();
    } else {
      root.fail(root.at("policies"), "expected a preset name or an object of model -> variant");
    }
    try {
      parse_policy_spec(spec);
    } catch (const UnknownPolicyError& e) {
      root.fail(root.at("policies"), e.what());
    }
    s.policies = spec;
  }

  ControlConfig& cc = s.control;
  if (const Json* c = root.get("cluster")) {
    Obj co(*c, root.at("cluster"), file);
    const std::string mode = co.string("mode", "slurm");
    if (mode != "slurm" && mode != "static")
      co.fail(co.at("mode"), "expected \"slurm\" or \"static\", got \"" + mode + "\"");
    cc.slurm_mode = mode == "slurm";
    if (const Json* h = co.get("head")) {
      Obj ho(*h, co.at("head"), file);
      s.head.ip = ho.string("ip", s.head.ip);
      s.head.cpus = static_cast<int>(ho.integer("cpus", s.head.cpus, 0, limits::kMaxCpus));
      s.head.memory_gb = ho.integer("memory_gb", s.head.memory_gb, 0, limits::kMaxMemoryGb);
      s.head.gpus = static_cast<int>(ho.integer("gpus", s.head.gpus, 0, limits::kMaxGpus));
      s.head.gpu = ho.string("gpu", "");
      if (s.head.gpus > 0) {
        if (s.head.gpu.empty()) ho.fail(ho.at("gpu"), "expected a GPU model name when gpus > 0");
        lookup_gpu(ho, ho.at("gpu"), s.head.gpu);
      }
      ho.finish();
    }
    auto& as = cc.autoscaler;
    if (const Json* w = co.get("worker_defaults")) {
      Obj wo(*w, co.at("worker_defaults"), file);
      as.defaults.cpus = static_cast<int>(wo.integer("cpus", as.defaults.cpus, 1, limits::kMaxCpus));
      as.defaults.gpus = static_cast<int>(wo.integer("gpus", as.defaults.gpus, 0, limits::kMaxGpus));
      as.defaults.mem_per_cpu_gb =
          static_cast<int>(wo.integer("mem_per_cpu_gb", as.defaults.mem_per_cpu_gb, 1, limits::kMaxMemPerCpuGb));
      as.defaults.time_limit = wo.duration("time_limit", as.defaults.time_limit);
      // A zero limit would end every job the moment it starts.
      if (as.defaults.time_limit <= 0) wo.fail(wo.at("time_limit"), "expected a positive duration");
      if (const Json* x = wo.get("extra_sbatch_args")) {
        if (!x->is_array()) wo.fail(wo.at("extra_sbatch_args"), "expected an array of strings");
        for (std::size_t i = 0; i < x->size(); ++i) {
          if (!(*x)[i].is_string())
            wo.fail(wo.at("extra_sbatch_args") + "[" + std::to_string(i) + "]", "expected a string");
          as.defaults.extra_sbatch_args.push_back((*x)[i].get<std::string>());
        }
      }
      wo.finish();
    }
    as.min_workers = static_cast<int>(co.integer("min_workers", as.min_workers, 0, limits::kMaxWorkers));
    as.max_workers = static_cast<int>(co.integer("max_workers", as.max_workers, 0, limits::kMaxWorkers));
    if (as.max_workers < as.min_workers) co.fail(co.at("max_workers"), "expected max_workers >= min_workers");
    s.initial_worker_size = WorkerJobSize{as.defaults.gpus, as.defaults.cpus, as.defaults.mem_per_cpu_gb,
                                          as.defaults.time_limit, {}};
    if (const Json* iw = co.get("initial_workers")) {
      if (iw->is_object()) {
        Obj io(*iw, co.at("initial_workers"), file);
        s.initial_workers = static_cast<int>(io.integer("count", 1, 0, limits::kMaxWorkers));
        auto& z = s.initial_worker_size;
        z.gpus = static_cast<int>(io.integer("gpus", z.gpus, 0, limits::kMaxGpus));
        z.cpus = static_cast<int>(io.integer("cpus", z.cpus, 1, limits::kMaxCpus));
        z.mem_per_cpu_gb = static_cast<int>(io.integer("mem_per_cpu_gb", z.mem_per_cpu_gb, 1, limits::kMaxMemPerCpuGb));
        io.finish();
      } else {
        s.initial_workers = static_cast<int>(co.integer("initial_workers", 0, 0, limits::kMaxWorkers));
      }
    }
    if (const Json* p = co.get("partition")) {
      if (!p->is_array() || p->empty()) co.fail(co.at("partition"), "expected a non-empty array of node types");
      for (std::size_t i = 0; i < p->size(); ++i) {
        Obj no((*p)[i], co.at("partition") + "[" + std::to_string(i) + "]", file);
        PartitionNodeType t;
        t.count = static_cast<int>(no.integer("count", 1, 1, limits::kMaxNodes));
        t.cpus = static_cast<int>(no.integer("cpus", 64, 1, limits::kMaxCpus));
        t.memory_gb = no.integer("memory_gb", 1024, 1, limits::kMaxMemoryGb);
        t.gpus = static_cast<int>(no.integer("gpus", 1, 0, limits::kMaxGpus));
        const std::string gpu = no.string("gpu", "A100-SXM4-40GB");
        const auto& info = lookup_gpu(no, no.at("gpu"), gpu);
        t.gpu_model = info.device_name;
        t.accelerator_type = info.accelerator_type;
        t.gpu_memory_mb = info.memory_mb;
        const std::string smi = no.string("nvidia_smi", "ok");
        if (smi != "ok" && smi != "missing" && smi != "fails")
          no.fail(no.at("nvidia_smi"), "expected \"ok\", \"missing\" or \"fails\", got \"" + smi + "\"");
        t.nvidia_smi_present = smi != "missing";
        t.nvidia_smi_fails = smi == "fails";
        t.mig_enabled = no.boolean("mig", false);
        no.finish();
        s.slurm.nodes.push_back(t);
      }
    } else {
      s.slurm.nodes.push_back(PartitionNodeType{});
    }
    if (co.has("partition_scheduler")) {
      const std::string m = enum_field(co, "partition_scheduler", {"exclusive", "fcfs", "easy"}, "a partition scheduler");
      s.slurm.scheduling = m == "fcfs"   ? PartitionScheduling::Fcfs
                           : m == "easy" ? PartitionScheduling::Easy
                                         : PartitionScheduling::Exclusive;
    }
    if (const Json* b = co.get("background")) {
      Obj bo(*b, co.at("background"), file);
      BackgroundSpec spec;
      spec.source = bo.has("source") ? enum_field(bo, "source", {"swf", "batsim"}, "a trace format") : "swf";
      spec.path = bo.string("path", "");
      if (spec.path.empty()) bo.fail(bo.at("path"), "expected the trace file's path (relative to the scenario)");
      if (!spec.path.empty() && spec.path.front() != '/') {
        const auto slash = file.find_last_of('/');
        if (slash != std::string::npos) spec.path = file.substr(0, slash + 1) + spec.path;
      }
      spec.limit = static_cast<std::size_t>(bo.integer("limit", 0, 0, limits::kMaxBackgroundJobs));
      if (bo.has("from_s")) spec.from_s = bo.integer("from_s", 0, 0, limits::kMaxTraceSeconds);
      spec.procs_per_node = bo.integer("procs_per_node", 0, 0, limits::kMaxCpus);
      bo.finish();
      if (s.slurm.scheduling == PartitionScheduling::Exclusive)
        co.fail(co.at("background"), "background jobs share the partition: set partition_scheduler to \"fcfs\" or "
                                     "\"easy\"");
      try {
        BackgroundLoad load = load_background(spec, s.slurm.nodes);
        if (load.jobs.size() > limits::kMaxBackgroundJobs)
          bo.fail(bo.at("limit"), "expected at most " + std::to_string(limits::kMaxBackgroundJobs) +
                                      " background jobs, the trace has " + std::to_string(load.jobs.size()));
        s.slurm.background = std::move(load.jobs);
        s.background_skipped = load.before_start + load.no_run_time + load.too_wide;
      } catch (const WorkloadError& e) {
        bo.fail(bo.at("path"), e.what());
      }
    }
    if (const Json* l = co.get("latency")) {
      Obj lo(*l, co.at("latency"), file);
      // A calibrated model first; the fields beside `from` override it.
      if (const Json* from = lo.get("from")) {
        const std::string model_file = latency_model_path(lo, *from);
        const Json model = read_json_file(model_file);
        Obj mo(model, "$", model_file);
        const std::string format = mo.string("format", std::string(kLatencyModelFormat));
        if (format != kLatencyModelFormat)
          mo.fail(mo.at("format"), "expected \"" + std::string(kLatencyModelFormat) + "\", got \"" + format + "\"");
        for (const char* k : {"traces", "criterion", "min_samples", "notes", "fit"}) mo.get(k);
        const Json* ml = mo.get("latency");
        if (!ml) mo.fail(mo.at("latency"), "expected the latency object of a calibrated model");
        Obj mlo(*ml, mo.at("latency"), model_file);
        parse_latency_fields(mlo, s, cc);
        mlo.finish();
        mo.finish();
      }
      parse_latency_fields(lo, s, cc);
      lo.finish();
    }
    if (const Json* a = co.get("autoscaler")) {
      Obj ao(*a, co.at("autoscaler"), file);
      cc.monitor_tick = ao.duration("tick", cc.monitor_tick);
      cc.monitor_work = parse_latency(ao, "tick_work", cc.monitor_work);
      as.scale_up_cooldown = ao.duration("scale_up_cooldown", as.scale_up_cooldown);
      as.scale_down_check_interval = ao.duration("scale_down_check_interval", as.scale_down_check_interval);
      as.scale_down_threshold = ao.duration("scale_down_threshold", as.scale_down_threshold);
      cc.creation_poll = ao.duration("creation_poll", cc.creation_poll);
      cc.grace_period = ao.duration("grace_period", cc.grace_period);
      // Periodic work wakes at most horizon / period times.
      if (cc.monitor_tick < limits::kMinPeriod)
        ao.fail(ao.at("tick"), "expected a duration of at least " + format_duration(limits::kMinPeriod));
      if (cc.creation_poll < limits::kMinPeriod)
        ao.fail(ao.at("creation_poll"), "expected a duration of at least " + format_duration(limits::kMinPeriod));
      ao.finish();
    }
    if (const Json* in = co.get("introspection")) {
      Obj io(*in, co.at("introspection"), file);
      cc.introspection_duration = io.duration("duration", cc.introspection_duration);
      cc.introspection_check_after = io.duration("check_after", cc.introspection_check_after);
      cc.introspection_request = ResourceSet{};
      cc.introspection_request.set(kCPU, io.number("cpus", 1.0, 0, static_cast<double>(limits::kMaxCpus)));
      io.finish();
    }
    co.finish();
  } else {
    s.slurm.nodes.push_back(PartitionNodeType{});
  }
  if (const Json* wl = root.get("workload")) {
    if (doc.contains("cluster") && doc["cluster"].is_object() && doc["cluster"].contains("partition"))
      root.fail("$.cluster.partition", "expected none with a workload: the trace's node list is the partition");
    apply_openb_workload(*wl, "$.workload", doc.contains("horizon"), s);
  }
  std::int64_t nodes = 0, warm_hosts = 0;
  for (std::size_t i = 0; i < s.slurm.nodes.size(); ++i) {
    const auto& t = s.slurm.nodes[i];
    nodes += t.count;
    if (nodes > limits::kMaxNodes)
      root.fail("$.cluster.partition[" + std::to_string(i) + "].count",
                "expected at most " + std::to_string(limits::kMaxNodes) + " partition nodes in all, got " +
                    std::to_string(nodes) + " up to this entry");
    if (SimSlurmBackend::fits(t, s.initial_worker_size)) warm_hosts += t.count;
  }
  const std::string warm_path =
      root.has("cluster") && doc["cluster"].contains("initial_workers") ? "$.cluster.initial_workers" : "$";
  if (s.initial_workers > cc.autoscaler.max_workers)
    root.fail(warm_path, "expected at most max_workers (" + std::to_string(cc.autoscaler.max_workers) +
                             ") warm workers, got " + std::to_string(s.initial_workers));
  // Warm workers start on the first free node that fits, as the backend
  // places them; one that fits none is an error here, not at run time.
  if (s.initial_workers > warm_hosts) {
    const auto& z = s.initial_worker_size;
    root.fail(warm_path, std::to_string(s.initial_workers) + " warm worker(s) of " + std::to_string(z.gpus) +
                             " GPU(s), " + std::to_string(z.cpus) + " CPU(s) and " +
                             std::to_string(z.mem_per_cpu_gb) + " GB per CPU, but only " +
                             std::to_string(warm_hosts) + " partition node(s) fit one");
  }

  std::map<std::string, AppSpec> by_id;
  for (const auto& a : s.apps) by_id[a.id] = a;  // a workload's apps
  std::vector<std::pair<SimTime, std::string>> deploy_times;
  if (const Json* apps = root.get("apps")) {
    if (!apps->is_array()) root.fail(root.at("apps"), "expected an array of apps");
    for (std::size_t i = 0; i < apps->size(); ++i) {
      Obj ao((*apps)[i], "$.apps[" + std::to_string(i) + "]", file);
      AppSpec a = parse_app(ao, nullptr);
      if (by_id.count(a.id)) ao.fail(ao.at("id"), "duplicate app id '" + a.id + "'");
      const Json* at = ao.get("deploy_at");
      if (at) {
        ScenarioAction act;
        act.at = ao.parse_duration_value(*at, ao.at("deploy_at"));
        act.kind = "deploy";
        act.app = a.id;
        act.json_path = ao.at("deploy_at");
        s.actions.push_back(act);
      }
      ao.finish();
      by_id[a.id] = a;
      s.apps.push_back(a);
    }
  }
  if (const Json* acts = root.get("actions")) {
    if (!acts->is_array()) root.fail(root.at("actions"), "expected an array of actions");
    for (std::size_t i = 0; i < acts->size(); ++i) {
      const std::string path = "$.actions[" + std::to_string(i) + "]";
      Obj ao((*acts)[i], path, file);
      ScenarioAction act;
      act.json_path = path;
      act.at = ao.duration("at", 0);
      act.kind = ao.string("do", "");
      static const std::set<std::string> kinds = {"deploy", "stop", "delete", "shutdown", "status", "call"};
      if (!kinds.count(act.kind))
        ao.fail(ao.at("do"), "expected one of: deploy, stop, delete, shutdown, status, call; got \"" + act.kind + "\"");
      if (act.kind == "deploy" || act.kind == "stop" || act.kind == "delete" || act.kind == "call") {
        act.app = ao.string("app", "");
        if (!by_id.count(act.app)) ao.fail(ao.at("app"), "unknown app '" + act.app + "' (declare it in $.apps)");
      }
      if (act.kind == "deploy") {
        // Fields given here change the app for this (re)deploy.
        static const std::vector<std::string> keys = {"gpu_memory_mb", "disable_gpu", "cpus", "memory_mb",
                                                      "replicas", "observed_vram_mb"};
        bool changed = false;
        for (const auto& k : keys) changed = changed || ao.has(k);
        if (changed) {
          Json sub = Json::object();
          for (const auto& k : keys)
            if (ao.has(k)) sub[k] = (*acts)[i][k];
          for (const auto& k : keys) ao.get(k);
          Obj so(sub, path, file);
          act.app_override = parse_app(so, &by_id.at(act.app));
        }
      }
      if (act.kind == "call") {
        if (const Json* p = ao.get("payload")) {
          if (!p->is_object()) ao.fail(ao.at("payload"), "expected an object (the request sent to the replica)");
          act.payload = *p;
        }
      }
      if (act.kind == "status") {
        if (const Json* e = ao.get("expect")) {
          if (!e->is_object()) ao.fail(ao.at("expect"), "expected an object of status field path -> value");
          act.expect = *e;
        }
      }
      ao.finish();
      s.actions.push_back(act);
    }
  }
  std::stable_sort(s.actions.begin(), s.actions.end(),
                   [](const ScenarioAction& a, const ScenarioAction& b) { return a.at < b.at; });
  if (const Json* ex = root.get("expect")) {
    if (!ex->is_array()) root.fail(root.at("expect"), "expected an array of expectations");
    for (std::size_t i = 0; i < ex->size(); ++i) {
      s.expectations.push_back(parse_expectation((*ex)[i], "$.expect[" + std::to_string(i) + "]", file, by_id));
    }
  }
  root.finish();
  return s;
}

namespace {

// Keeps a parser message on one printable line: control and non-ASCII bytes
// (the parser quotes what it last read) become \xNN.
std::string printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
  }
  return out;
}

// The parser's own reason, without its "[json.exception.parse_error.101] "
// prefix.
std::string parser_reason(const nlohmann::json::exception& e) {
  std::string what = e.what();
  if (!what.empty() && what.front() == '[') {
    auto close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
  }
  return printable(what);
}

// Tracks where the parser is, to refuse duplicate keys (last-wins would hide
// a typo) and nesting deeper than limits::kMaxDepth (recursive copies and
// dumps of such a document could exhaust the stack).
class StructureCheck {
 public:
  explicit StructureCheck(const std::string& file) : file_(file) {}
  bool operator()(int, nlohmann::json::parse_event_t event, Json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        if (frames_.size() >= static_cast<std::size_t>(limits::kMaxDepth))
          throw ScenarioError(file_, path(), "nesting deeper than " + std::to_string(limits::kMaxDepth) +
                                                 " levels of objects and arrays");
        frames_.push_back(Frame{event == E::object_start, {}, {}, 0});
        break;
      case E::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second)
          throw ScenarioError(file_, path(), "duplicate key \"" + f.key + "\" (each key may appear once)");
        break;
      }
      case E::object_end:
      case E::array_end:
        frames_.pop_back();
        [[fallthrough]];
      case E::value:
        if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;
    std::size_t index;
  };
  std::string path() const {
    std::string p = "$";
    for (const auto& f : frames_) {
      if (f.object) { if (!f.key.empty() || !f.keys.empty()) p += "." + f.key; }
      else p += "[" + std::to_string(f.index) + "]";
    }
    return p;
  }
  const std::string& file_;
  std::vector<Frame> frames_;
};

}  // namespace

namespace {

Json parse_json_text(const std::string& text, const std::string& file) {
  if (text.size() > limits::kMaxFileBytes)
    throw ScenarioError(file, "$", "the file is " + std::to_string(text.size()) + " bytes; at most " +
                                       std::to_string(limits::kMaxFileBytes) + " are read");
  // The JSON lexer takes a NUL byte for the end of input; whatever follows
  // it would be silently ignored.
  if (auto nul = text.find('\0'); nul != std::string::npos)
    throw ScenarioError(file, "$", "a NUL byte at offset " + std::to_string(nul) +
                                       " (expected one JSON document and nothing after it)");
  Json doc;
  try {
    StructureCheck check(file);
    doc = Json::parse(text, std::ref(check), /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const nlohmann::json::parse_error& e) {
    // "parse error at line 3, column 5: syntax error ... - invalid literal; ..."
    std::string reason = parser_reason(e);
    const std::string prefix = "parse error at ";
    if (reason.rfind(prefix, 0) == 0) reason = " at " + reason.substr(prefix.size());
    else reason = ": " + reason;
    throw ScenarioError(file, "$", "invalid JSON" + reason);
  } catch (const nlohmann::json::exception& e) {
    // out_of_range: a number too large for a double (1e400).
    throw ScenarioError(file, "$", "invalid JSON: " + parser_reason(e));
  }
  return doc;
}

std::string read_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path, "$", "cannot open the file for reading");
  // One byte past the limit is enough to refuse an oversized file.
  std::string text(limits::kMaxFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw ScenarioError(path, "$", "cannot read the file");
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

}  // namespace

Json read_json_file(const std::string& path) { return parse_json_text(read_file_text(path), path); }

Scenario parse_scenario_text(const std::string& text, const std::string& file) {
  return parse_scenario(parse_json_text(text, file), file);
}

Scenario load_scenario(const std::string& path) { return parse_scenario_text(read_file_text(path), path); }

}  // namespace vramsim
