// $.apps[i].serve: Ray Serve's deployment options by Ray's names, the
// replica's work, and the traffic (docs/serving.md, docs/scenario-format.md).
#include <algorithm>
#include <fstream>
#include <sstream>

#include "models/gpu_models.hpp"
#include "models/registry.hpp"
#include "models/sharing_curves.hpp"
#include "scenario/scenario_parse.hpp"
#include "workload/traffic_trace.hpp"

namespace vramsim::scenario_parse {

using scenario_fields::enum_field;
using scenario_fields::lookup_gpu;
using scenario_fields::parse_latency;
using scenario_fields::type_name;

namespace {

constexpr double kMaxRate = 1e6;            // requests per second
constexpr double kMaxDelayS = 365.0 * 86400;
constexpr std::int64_t kMaxRequests = 1000000000;
constexpr std::int64_t kMaxOngoing = 1000000;

// A number or null; null and absent give none.
std::optional<double> nullable_number(Obj& o, const std::string& key, double min, double max, bool open_min) {
  const Json* v = o.get(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_number()) o.fail(o.at(key), "expected a number or null, got " + std::string(type_name(*v)));
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < min || (open_min && x <= min) || x > max)
    o.fail(o.at(key), std::string("expected a number in ") + (open_min ? "(" : "[") + format_number(min) + ", " +
                          format_number(max) + "] or null, got " + v->dump());
  return x;
}

// A field that may be absent (the default) but not null.
double positive(Obj& o, const std::string& key, double def, double max) {
  if (!o.has(key)) return def;
  const auto v = nullable_number(o, key, 0, max, true);
  if (!v) o.fail(o.at(key), "expected a number in (0, " + format_number(max) + "], got null");
  return *v;
}

double non_negative(Obj& o, const std::string& key, double def, double max) {
  if (!o.has(key)) return def;
  const auto v = nullable_number(o, key, 0, max, false);
  if (!v) o.fail(o.at(key), "expected a number in [0, " + format_number(max) + "], got null");
  return *v;
}

TrafficSpec parse_trace(Obj& o, const std::string& app_id, bool* as_measured) {
  TrafficTraceOptions t;
  t.app_id = app_id;
  t.format = enum_field(o, "format", {"gentd26-requests", "gentd26-qps", "azure-llm"}, "a traffic trace format");
  t.path = o.string("path", "");
  if (t.path.empty()) o.fail(o.at("path"), "expected the trace file's path (relative to the scenario)");
  if (t.path.front() != '/') {
    const auto slash = o.file().find_last_of('/');
    if (slash != std::string::npos) t.path = o.file().substr(0, slash + 1) + t.path;
  }
  t.app_column = scenario_fields::opt_string(o, "app_column");
  if (o.has("exec_time")) {
    if (t.format == "gentd26-qps")
      o.fail(o.at("exec_time"), "expected exec_time only with a trace of per-request times (gentd26-requests, "
                                "azure-llm)");
    *as_measured = enum_field(o, "exec_time", {"solo", "as-measured"}, "a reading of the trace's times") ==
                   "as-measured";
  }
  if (const Json* f = o.get("filter")) {
    Obj fo(*f, o.at("filter"), o.file());
    for (auto it = f->begin(); it != f->end(); ++it) t.filter[it.key()] = fo.string(it.key(), "");
    fo.finish();
  }
  t.time_scale = positive(o, "time_scale", 1, 1e6);
  t.rate_scale = positive(o, "rate_scale", 1, 1e6);
  if (o.has("limit")) t.limit = static_cast<std::uint64_t>(o.integer("limit", 1, 1, kMaxRequests));
  if (const Json* tk = o.get("tokens")) {
    if (t.format != "azure-llm") o.fail(o.at("tokens"), "expected tokens only with format azure-llm");
    Obj ko(*tk, o.at("tokens"), o.file());
    t.overhead_s = non_negative(ko, "overhead_s", t.overhead_s, 3600);
    t.prefill_s_per_token = non_negative(ko, "prefill_s_per_token", t.prefill_s_per_token, 60);
    t.decode_s_per_token = non_negative(ko, "decode_s_per_token", t.decode_s_per_token, 60);
    ko.finish();
  }
  try {
    TrafficSpec spec = load_traffic_trace(t);
    if (spec.requests.size() > static_cast<std::size_t>(kMaxRequests))
      o.fail(o.at("path"), "expected at most " + std::to_string(kMaxRequests) + " requests");
    return spec;
  } catch (const WorkloadError& e) {
    o.fail(o.at("path"), e.what());
  }
}

constexpr int kMaxSamplesPerWindow = 100000;
constexpr int kMaxAggregatedSamplesPerWindow = 1000;

ReplicaAutoscalingConfig parse_autoscaling(Obj& o) {
  ReplicaAutoscalingConfig c;
  c.min_replicas = static_cast<int>(o.integer("min_replicas", c.min_replicas, 0, limits::kMaxReplicas));
  c.max_replicas = static_cast<int>(o.integer("max_replicas", c.max_replicas, 1, limits::kMaxReplicas));
  if (c.max_replicas < c.min_replicas)
    o.fail(o.at("max_replicas"), "expected max_replicas >= min_replicas (" + std::to_string(c.min_replicas) +
                                     "), got " + std::to_string(c.max_replicas));
  if (const Json* v = o.get("initial_replicas"); v && !v->is_null())
    c.initial_replicas = static_cast<int>(o.integer_value(*v, o.at("initial_replicas"), c.min_replicas, c.max_replicas));
  c.target_ongoing_requests = positive(o, "target_ongoing_requests", c.target_ongoing_requests, kMaxOngoing);
  c.metrics_interval_s = positive(o, "metrics_interval_s", c.metrics_interval_s, 3600);
  c.look_back_period_s = positive(o, "look_back_period_s", c.look_back_period_s, 86400);
  c.upscale_delay_s = non_negative(o, "upscale_delay_s", c.upscale_delay_s, kMaxDelayS);
  c.downscale_delay_s = non_negative(o, "downscale_delay_s", c.downscale_delay_s, kMaxDelayS);
  c.downscale_to_zero_delay_s = nullable_number(o, "downscale_to_zero_delay_s", 0, kMaxDelayS, false);
  c.smoothing_factor = positive(o, "smoothing_factor", c.smoothing_factor, 100);
  c.upscaling_factor = nullable_number(o, "upscaling_factor", 0, 100, true);
  c.downscaling_factor = nullable_number(o, "downscaling_factor", 0, 100, true);
  if (o.has("aggregation_function")) {
    const std::string f = o.string("aggregation_function", "");
    const auto a = aggregation_from_name(f);
    if (!a) o.fail(o.at("aggregation_function"), "expected \"mean\", \"max\" or \"min\", got \"" + f + "\"");
    c.aggregation_function = *a;
  }
  c.policy = o.string("policy", c.policy);
  if (!PolicyRegistry::instance().has(ReplicaAutoscalingPolicy::kModel, c.policy)) {
    std::vector<std::string> names = PolicyRegistry::instance().variants(ReplicaAutoscalingPolicy::kModel);
    o.fail(o.at("policy"), "unknown replica autoscaling policy '" + c.policy + "' (expected " +
                               scenario_fields::one_of(names) + ")");
  }
  o.finish();
  return c;
}

ServiceTimeModel parse_service(Obj& so) {
  ServiceTimeModel m;
  m.base = parse_latency(so, "service_time", LatencyModel::fixed(kSecond));
  if (const Json* by = so.get("service_time_by_gpu")) {
    Obj bo(*by, so.at("service_time_by_gpu"), so.file());
    for (auto it = by->begin(); it != by->end(); ++it) {
      const auto& info = lookup_gpu(bo, bo.at(it.key()), it.key());
      m.by_device[info.device_name] = parse_latency(bo, it.key(), m.base);
    }
    bo.finish();
  }
  if (auto ref = scenario_fields::opt_string(so, "service_time_reference_gpu")) {
    const auto& info = lookup_gpu(so, so.at("service_time_reference_gpu"), *ref);
    const GpuPeak* p = find_gpu_peak(info.device_name);
    const auto t = p ? (p->tflops(Accumulate::Fp32) ? p->tflops(Accumulate::Fp32) : p->tflops(Accumulate::Fp16))
                     : std::nullopt;
    if (!t || *t <= 0)
      so.fail(so.at("service_time_reference_gpu"), "no fp16 TFLOPS figure is known for '" + *ref +
                                                       "' (expected a GPU model of docs/gpu-models.md's table)");
    m.reference_device = info.device_name;
    m.reference_tflops = *t;
  }
  m.batching_slowdown = so.number("batching_slowdown", 0, 0, 100);
  return m;
}

constexpr std::size_t kMaxCurvePoints = 4096;
constexpr double kMaxCurveValue = 1e6;

// v(1), v(2), ...: positive, finite, v(1) = 1 (a speed relative to one alone).
std::vector<double> curve_values(const Json& v, const std::string& path, const Obj& o) {
  if (!v.is_array() || v.empty() || v.size() > kMaxCurvePoints)
    o.fail(path, "expected a non-empty array (at most " + std::to_string(kMaxCurvePoints) +
                     ") of throughputs relative to one alone, v(1), v(2), ...");
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (!v[i].is_number()) o.fail(at, "expected a number, got " + std::string(type_name(v[i])));
    const double x = v[i].get<double>();
    if (!std::isfinite(x) || x <= 0 || x > kMaxCurveValue)
      o.fail(at, "expected a number in (0, " + format_number(kMaxCurveValue) + "], got " + v[i].dump());
    out.push_back(x);
  }
  if (out[0] != 1) o.fail(path + "[0]", "expected v(1) = 1 (throughputs are relative to one alone), got " + v[0].dump());
  return out;
}

// A curve file, as tools/device-colocation.sh writes it: an object whose
// "curve" is v(1), v(2), ...; its other fields are what was measured.
std::vector<double> curve_file_values(Obj& o, const std::string& key) {
  std::string path = o.string(key, "");
  if (path.empty()) o.fail(o.at(key), "expected the curve file's path (relative to the scenario)");
  if (path.front() != '/') {
    const auto slash = o.file().find_last_of('/');
    if (slash != std::string::npos) path = o.file().substr(0, slash + 1) + path;
  }
  std::ifstream in(path);
  if (!in) o.fail(o.at(key), "cannot read the curve file " + path);
  std::stringstream text;
  text << in.rdbuf();
  const Json j = Json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("curve"))
    o.fail(o.at(key), path + ": expected a JSON object with a \"curve\" array (as tools/device-colocation.sh writes)");
  return curve_values(j["curve"], path + ": $.curve", o);
}

// A preset's name, {"curve": [...]}, or {"curve_file": "..."}.
SpeedCurve parse_curve(Obj& so, const std::string& key, const SpeedCurve& def) {
  const Json* v = so.get(key);
  if (!v) return def;
  if (v->is_string()) {
    const SharingPreset* p = find_sharing_preset(v->get<std::string>());
    if (!p) {
      std::vector<std::string> names;
      for (const auto& q : sharing_presets()) names.push_back(q.name);
      so.fail(so.at(key), "unknown sharing curve '" + v->get<std::string>() + "' (expected " +
                              scenario_fields::one_of(names) + ", {\"curve\": [...]} or {\"curve_file\": \"...\"})");
    }
    return p->curve();
  }
  if (!v->is_object())
    so.fail(so.at(key), "expected a preset's name, {\"curve\": [...]} or {\"curve_file\": \"...\"}, got " +
                            std::string(type_name(*v)));
  Obj co(*v, so.at(key), so.file());
  SpeedCurve c;
  if (co.has("curve") == co.has("curve_file"))
    co.fail(co.path(), "expected one of curve (an array) or curve_file (a path)");
  if (const Json* a = co.get("curve")) {
    c.name = "curve";
    c.values = curve_values(*a, co.at("curve"), co);
  } else {
    c.name = co.string("curve_file", "");
    c.values = curve_file_values(co, "curve_file");
  }
  co.finish();
  return c;
}

TrafficSpec parse_traffic(Obj& to, const std::string& app_id, bool* as_measured) {
  TrafficSpec t;
  if (const Json* tr = to.get("trace")) {
    Obj o(*tr, to.at("trace"), to.file());
    t = parse_trace(o, app_id, as_measured);
    o.finish();
  } else {
    const std::string process =
        to.has("process") ? enum_field(to, "process", {"poisson", "piecewise", "diurnal"}, "a traffic process")
                          : "poisson";
    if (process == "poisson") {
      t.process = TrafficSpec::Process::Poisson;
      t.rate_per_s = to.number("rate_per_s", t.rate_per_s, 0, kMaxRate);
    } else if (process == "piecewise") {
      t.process = TrafficSpec::Process::Piecewise;
      const Json* pts = to.get("points");
      if (!pts || !pts->is_array() || pts->empty() || pts->size() > 1000000)
        to.fail(to.at("points"), "expected a non-empty array (at most 1000000) of {\"at\", \"rate_per_s\"}");
      for (std::size_t i = 0; i < pts->size(); ++i) {
        Obj po((*pts)[i], to.at("points") + "[" + std::to_string(i) + "]", to.file());
        TrafficPoint p{po.duration("at", 0), po.number("rate_per_s", 0, 0, kMaxRate)};
        if (!po.has("rate_per_s")) po.fail(po.at("rate_per_s"), "expected a rate (requests per second)");
        if (!t.points.empty() && p.at < t.points.back().at)
          po.fail(po.at("at"), "expected points in time order (" + format_duration(p.at) + " is before " +
                                   format_duration(t.points.back().at) + ")");
        po.finish();
        t.points.push_back(p);
      }
      if (to.has("interpolation"))
        t.step = enum_field(to, "interpolation", {"linear", "step"}, "an interpolation") == "step";
    } else {
      t.process = TrafficSpec::Process::Diurnal;
      t.mean_rate_per_s = to.number("mean_rate_per_s", t.mean_rate_per_s, 0, kMaxRate);
      if (to.has("peak_to_mean")) {
        if (to.has("amplitude"))
          to.fail(to.at("peak_to_mean"), "expected amplitude (a sinusoid, peak at most twice the mean) or "
                                         "peak_to_mean (the raised form, any peak), not both");
        t.peak_to_mean = to.number("peak_to_mean", 2, 1, 100);
        t.power = diurnal_power(*t.peak_to_mean);
      }
      t.amplitude = to.number("amplitude", t.amplitude, 0, 1);
      t.period = to.duration("period", t.period);
      if (t.period <= 0) to.fail(to.at("period"), "expected a positive duration");
      t.phase = to.duration("phase", t.phase);
    }
  }
  if (to.has("start")) t.start = to.duration("start", 0);
  if (to.has("end")) t.end = to.duration("end", 0);
  if (t.start && t.end && *t.end < *t.start) to.fail(to.at("end"), "expected end >= start");
  if (to.has("max_requests")) t.max_requests = static_cast<std::uint64_t>(to.integer("max_requests", 1, 1, kMaxRequests));
  to.finish();
  return t;
}

}  // namespace

void parse_serve(Obj& ao, AppSpec& a, Scenario& s) {
  const Json* v = ao.get("serve");
  if (!v) return;
  Obj so(*v, ao.at("serve"), ao.file());
  ServeSpec sv;
  sv.max_ongoing_requests = static_cast<int>(so.integer("max_ongoing_requests", sv.max_ongoing_requests, 1, kMaxOngoing));
  sv.max_queued_requests = static_cast<int>(so.integer("max_queued_requests", sv.max_queued_requests, -1, kMaxRequests));
  if (sv.max_queued_requests == 0)
    so.fail(so.at("max_queued_requests"), "expected -1 (no limit) or at least 1, got 0");
  if (auto t = nullable_number(so, "request_timeout_s", 0, kMaxDelayS, true)) sv.request_timeout = seconds(*t);
  if (auto t = nullable_number(so, "slo_latency_s", 0, kMaxDelayS, true)) sv.slo_latency = seconds(*t);
  sv.service = parse_service(so);
  sv.device_sharing = parse_curve(so, "device_sharing", sv.device_sharing);
  if (sv.service.batching_slowdown > 0) {
    if (so.has("replica_concurrency"))
      so.fail(so.at("batching_slowdown"), "expected batching_slowdown or replica_concurrency, not both "
                                          "(batching_slowdown b is replica_concurrency h(r) = r / (1 + b (r - 1)))");
    sv.replica_concurrency = batching_curve(sv.service.batching_slowdown, sv.max_ongoing_requests);
  }
  sv.replica_concurrency = parse_curve(so, "replica_concurrency", sv.replica_concurrency);
  if (const Json* as = so.get("autoscaling_config"); as && !as->is_null()) {
    if (ao.has("replicas"))
      ao.fail(ao.at("replicas"), "expected no replicas beside serve.autoscaling_config (Ray Serve takes one or the "
                                 "other: the autoscaler sets the count from initial_replicas or min_replicas)");
    Obj co(*as, so.at("autoscaling_config"), so.file());
    sv.autoscaling = parse_autoscaling(co);
    // The handle keeps a look-back window of samples: bounded, so that a
    // valid file cannot ask for millions (86400 s at 0.01 s); where the
    // controller aggregates, each decision reads the whole window.
    const RayServeSettings& ray = s.control.ray_serve;
    const int cap = ray.aggregate_at_controller ? kMaxAggregatedSamplesPerWindow : kMaxSamplesPerWindow;
    const std::size_t per_window =
        ray.samples_per_window(sv.autoscaling->look_back_period_s, sv.autoscaling->metrics_interval_s);
    if (per_window > static_cast<std::size_t>(cap))
      co.fail(co.at("look_back_period_s"),
              "expected at most " + std::to_string(cap) +
                  " handle samples in a look-back window (look_back_period_s over the record interval, " +
                  std::to_string(per_window) + " here; ray_serve.env sets the interval" +
                  (ray.aggregate_at_controller ? ", and the controller aggregates" : "") + ")");
    a.replicas = sv.autoscaling->starting_replicas();
  }
  if (const Json* tr = so.get("traffic")) {
    Obj to(*tr, so.at("traffic"), so.file());
    s.traffic[a.id] = parse_traffic(to, a.id, &sv.trace_time_as_measured);
  }
  so.finish();
  a.serve = std::move(sv);
}

// $.ray_serve: the Ray Serve installation: its version and the environment
// variables of its controller and handles that the model reads.
void parse_ray_serve(Obj& root, Scenario& s) {
  const Json* rs = root.get("ray_serve");
  if (!rs) return;
  Obj o(*rs, root.at("ray_serve"), root.file());
  RayServeSettings& r = s.control.ray_serve;
  if (o.has("version")) {
    const std::string v = o.string("version", "");
    if (v == version_name(RayServeVersion::k2026_04_29)) r.version = RayServeVersion::k2026_04_29;
    else if (v == version_name(RayServeVersion::k2025_10_06)) r.version = RayServeVersion::k2025_10_06;
    else
      o.fail(o.at("version"), std::string("expected \"") + version_name(RayServeVersion::k2026_04_29) + "\" or \"" +
                                  version_name(RayServeVersion::k2025_10_06) + "\", got \"" + v + "\"");
  }
  if (const Json* env = o.get("env")) {
    Obj eo(*env, o.at("env"), o.file());
    const std::string aggregate = "RAY_SERVE_AGGREGATE_METRICS_AT_CONTROLLER";
    for (const char* known : {"RAY_SERVE_AGGREGATE_METRICS_AT_CONTROLLER", "RAY_SERVE_AUTOSCALING_METRIC_RECORD_INTERVAL_FACTOR",
                              "RAY_SERVE_HANDLE_AUTOSCALING_METRIC_RECORD_INTERVAL_S",
                              "RAY_SERVE_HANDLE_AUTOSCALING_METRIC_PUSH_INTERVAL_S",
                              "RAY_SERVE_REPLICA_AUTOSCALING_METRIC_PUSH_INTERVAL_S"})
      eo.get(known);  // named in an unknown variable's message
    if (eo.has(aggregate)) {
      // An environment variable's text; Ray takes "1" as on (constants.py:852-855@5866967).
      const std::string v = eo.string(aggregate, "0");
      if (v != "0" && v != "1") eo.fail(eo.at(aggregate), "expected \"0\" or \"1\", got \"" + v + "\"");
      r.aggregate_at_controller = v == "1";
    }
    const std::string factor = "RAY_SERVE_AUTOSCALING_METRIC_RECORD_INTERVAL_FACTOR";
    const std::string record = "RAY_SERVE_HANDLE_AUTOSCALING_METRIC_RECORD_INTERVAL_S";
    if (eo.has(factor) && r.version != RayServeVersion::k2026_04_29)
      eo.fail(eo.at(factor), "expected none with version 2025-10-06 (added by 41ddcb7044, 2026-03-09)");
    if (eo.has(record) && r.version != RayServeVersion::k2025_10_06)
      eo.fail(eo.at(record), "expected none with version 2026-04-29 (removed by 41ddcb7044, 2026-03-09; "
                             "RAY_SERVE_AUTOSCALING_METRIC_RECORD_INTERVAL_FACTOR sets the interval now)");
    r.record_interval_factor = eo.number(factor, r.record_interval_factor, 0.001, 1);
    r.record_interval_s = eo.number(record, r.record_interval_s, 0.01, 3600);
    for (const char* push : {"RAY_SERVE_HANDLE_AUTOSCALING_METRIC_PUSH_INTERVAL_S",
                             "RAY_SERVE_REPLICA_AUTOSCALING_METRIC_PUSH_INTERVAL_S"})
      if (eo.has(push)) {
        eo.number(push, 10, 0.01, 3600);
        s.warnings.push_back(eo.at(push) + ": read and left unused, as Ray Serve does: it defines " + push +
                             " (constants.py:422-431@5866967) but no code reads it; a handle pushes every "
                             "autoscaling_config.metrics_interval_s");
      }
    eo.finish();
  }
  o.finish();
}

}  // namespace vramsim::scenario_parse
