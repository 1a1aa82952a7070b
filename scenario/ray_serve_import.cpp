// Ray Serve config files in. Every rule cites Ray's source at 5866967ffd
// (schema.py = python/ray/serve/schema.py, config.py =
// python/ray/serve/config.py, _private/*): docs/import.md has the table.
#include "scenario/ray_serve_config.hpp"

#include <cerrno>
#include <cmath>
#include <regex>
#include <set>
#include <sstream>

#include "engine/format.hpp"
#include "scenario/ray_serve_reader.hpp"
#include "scenario/yaml_document.hpp"

namespace vramsim {

using namespace ray_serve_detail;

namespace {

// The cluster an import gets without --cluster (docs/import.md).
Json default_cluster() {
  return Json::parse(R"({
    "max_workers": 4,
    "worker_defaults": {"gpus": 1, "time_limit": "30d"},
    "partition": [{"count": 4, "cpus": 32, "memory_gb": 256, "gpus": 1, "gpu": "A100-SXM4-80GB"}]
  })");
}

// Ray's get_capacity_adjusted_num_replicas (_private/utils.py:623-646):
// n x target_capacity / 100 rounded half up, at least 1 unless n or the
// capacity is 0.
std::int64_t capacity_adjusted(std::int64_t n, std::optional<double> target_capacity) {
  if (!target_capacity || *target_capacity == 100) return n;
  if (*target_capacity == 0 || n == 0) return 0;
  const double x = static_cast<double>(n) * *target_capacity / 100.0;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(x + 0.5)));
}

// Ray's ServeApplicationSchema.import_path check (schema.py:816-848).
void check_import_path(ServeConfigReader& r, const std::string& ip, const std::string& path) {
  const auto colons = std::count(ip.begin(), ip.end(), ':');
  if (colons > 1) r.fail(path, "expected an import path with at most one colon, got \"" + ip + "\"");
  if (colons == 1 && (ip.front() == ':' || ip.back() == ':'))
    r.fail(path, "expected an import path that does not start or end with a colon, got \"" + ip + "\"");
  if (colons == 0) {
    if (ip.find('.') == std::string::npos)
      r.fail(path, "expected an import path with at least one dot or colon (module:attribute), got \"" + ip + "\"");
    if (ip.front() == '.' || ip.back() == '.')
      r.fail(path, "expected an import path that does not start or end with a dot, got \"" + ip + "\"");
  }
}

struct Deployment {
  Json app;               // the scenario app
  std::string yaml_path;  // "applications[0].deployments[1]"
};

class Importer {
 public:
  Importer(ServeConfigReader& r, const RayServeImportOptions& o) : r_(r), opts_(o) {}

  Json autoscaling(const Json& given, const std::string& path, bool auto_replicas) {
    // "auto": AutoscalingConfig.default() (min 1, max 100, target 2;
    // config.py:687-693) updated with the given fields (application_state.py
    // :1748-1776); otherwise the model's defaults (min 1, max 1, ...).
    Json out = Json::object();
    std::int64_t min_r = 1, max_r = auto_replicas ? 100 : 1;
    std::int64_t initial = -1;  // -1: none (a sentinel, not an optional: GCC 12 misreads one here)
    double to_zero = -1;        // -1: none
    double target = 2, metrics = 10, look_back = 30, smoothing = 1, up_delay = 30, down_delay = 600;
    std::optional<double> up_factor, down_factor, up_smoothing, down_smoothing;
    std::string aggregation = "mean";
    if (!given.is_null()) {
      r_.mapping(given, path);
      for (auto it = given.begin(); it != given.end(); ++it) {
        const std::string& k = it.key();
        const Json& v = it.value();
        const std::string p = ServeConfigReader::at(path, k);
        auto opt_pos = [&](std::optional<double>& into) {
          if (v.is_null()) into.reset();
          else into = r_.number(v, p, 0, HUGE_VAL, true);
        };
        if (k == "min_replicas") min_r = r_.integer(v, p, 0, INT64_MAX);
        else if (k == "max_replicas") max_r = r_.integer(v, p, 1, INT64_MAX);
        else if (k == "initial_replicas") {
          initial = v.is_null() ? -1 : r_.integer(v, p, 0, INT64_MAX);
        } else if (k == "target_ongoing_requests") {
          if (!v.is_null()) target = r_.number(v, p, 0, HUGE_VAL, true);
        } else if (k == "metrics_interval_s") {
          metrics = r_.number(v, p, 0, HUGE_VAL, true);
          if (metrics != 10) r_.note(p, "deprecated in Ray (a value other than 10 warns), read as given");
        } else if (k == "look_back_period_s") look_back = r_.number(v, p, 0, HUGE_VAL, true);
        else if (k == "smoothing_factor") smoothing = r_.number(v, p, 0, HUGE_VAL, true);
        else if (k == "upscale_smoothing_factor") opt_pos(up_smoothing);
        else if (k == "downscale_smoothing_factor") opt_pos(down_smoothing);
        else if (k == "upscaling_factor") opt_pos(up_factor);
        else if (k == "downscaling_factor") opt_pos(down_factor);
        else if (k == "upscale_delay_s") up_delay = r_.number(v, p, 0, HUGE_VAL, false);
        else if (k == "downscale_delay_s") down_delay = r_.number(v, p, 0, HUGE_VAL, false);
        else if (k == "downscale_to_zero_delay_s") {
          to_zero = v.is_null() ? -1 : r_.number(v, p, 0, HUGE_VAL, false);
        } else if (k == "aggregation_function") {
          const auto a = aggregation_from_name(r_.string(v, p));
          if (!a) r_.fail(p, "expected mean, max or min (any case), got \"" + v.get<std::string>() + "\"");
          const std::string f = aggregation_name(*a);
          aggregation = f;
          if (f != "mean")
            r_.note(p, "aggregation_function " + f + ": used, as by Ray, only where the controller aggregates "
                       "(the scenario's ray_serve.env RAY_SERVE_AGGREGATE_METRICS_AT_CONTROLLER \"1\")");
        } else if (k == "policy") {
          r_.note(p, "a custom autoscaling policy, not modelled: Ray's default policy is used");
        } else if (k == "target_num_ongoing_requests_per_replica" && opts_.legacy_names) {
          if (!given.contains("target_ongoing_requests") || given["target_ongoing_requests"].is_null())
            target = r_.number(v, p, 0, HUGE_VAL, true);
          r_.note(p, "read as target_ongoing_requests (--legacy-names)");
        } else if (k == "target_num_ongoing_requests_per_replica") {
          r_.note(p, "ignored, as Ray ignores it since 16b024323e (2024-07-16); Ray before read it as "
                     "target_ongoing_requests (--legacy-names)");
        } else {
          r_.note(p, "ignored, as Ray ignores fields it does not know");
        }
      }
    }
    // Ray's replicas_settings_valid (config.py:624-648).
    if (max_r < min_r)
      r_.fail(ServeConfigReader::at(path, "max_replicas"), "expected max_replicas >= min_replicas (" + std::to_string(min_r) +
                                                    "), got " + std::to_string(max_r));
    if (initial >= 0 && (initial < min_r || initial > max_r))
      r_.fail(ServeConfigReader::at(path, "initial_replicas"), "expected initial_replicas in [min_replicas, max_replicas] = [" +
                                                        std::to_string(min_r) + ", " + std::to_string(max_r) +
                                                        "], got " + std::to_string(initial));
    // The effective factors (config.py:695-705): the new name, else the old
    // specific one, else smoothing_factor.
    if (!up_factor && up_smoothing) up_factor = up_smoothing;
    if (!down_factor && down_smoothing) down_factor = down_smoothing;
    out["min_replicas"] = capacity_adjusted(min_r, target_capacity_);
    out["max_replicas"] = capacity_adjusted(max_r, target_capacity_);
    if (initial >= 0) out["initial_replicas"] = capacity_adjusted(initial, target_capacity_);
    out["target_ongoing_requests"] = target;
    out["metrics_interval_s"] = metrics;
    out["look_back_period_s"] = look_back;
    out["upscale_delay_s"] = up_delay;
    out["downscale_delay_s"] = down_delay;
    if (to_zero >= 0) out["downscale_to_zero_delay_s"] = to_zero;
    out["smoothing_factor"] = smoothing;
    if (up_factor) out["upscaling_factor"] = *up_factor;
    if (down_factor) out["downscaling_factor"] = *down_factor;
    if (aggregation != "mean") out["aggregation_function"] = aggregation;
    return out;
  }

  // ray_actor_options -> cpus, memory_mb, gpu_memory_mb or num_gpus.
  void actor_options(const Json& v, const std::string& path, Json& app) {
    double cpus = 1;  // ReplicaConfig: num_cpus None -> 1 (_private/config.py:858-860)
    std::optional<double> gpus;
    std::optional<std::int64_t> vram;
    double memory = 0;
    if (!v.is_null()) {
      r_.mapping(v, path);
      for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string& k = it.key();
        const Json& x = it.value();
        const std::string p = ServeConfigReader::at(path, k);
        if (k == "num_cpus") {
          if (!x.is_null()) cpus = r_.number(x, p, 0, HUGE_VAL, false);
        } else if (k == "num_gpus") {
          if (!x.is_null()) gpus = r_.number(x, p, 0, HUGE_VAL, false);
        } else if (k == "memory") {
          if (!x.is_null()) memory = r_.number(x, p, 0, HUGE_VAL, false);
        } else if (k == "resources") {
          r_.mapping(x, p);
          for (auto rt = x.begin(); rt != x.end(); ++rt) {
            const std::string rp = ServeConfigReader::at(p, rt.key());
            if (rt.key() == "CPU" || rt.key() == "GPU")
              r_.fail(rp, "expected num_cpus / num_gpus for " + rt.key() + " (Ray refuses it in resources)");
            const double q = r_.number(rt.value(), rp, 0, HUGE_VAL, false);
            if (rt.key() == "VRAM_MB") {
              if (q != std::floor(q)) r_.fail(rp, "expected a whole number of MB, got " + rt.value().dump());
              if (q > 0) vram = static_cast<std::int64_t>(q);
            } else {
              r_.note(rp, "a custom resource, not modelled (no node offers it in the scenario)");
            }
          }
        } else if (k == "accelerator_type" || k == "label_selector" || k == "fallback_strategy") {
          r_.note(p, "read, not modelled (any GPU node may take the replica)");
        } else if (k == "runtime_env") {
          r_.note(p, "not modelled beyond its install time (cluster.latency.runtime_env_install)");
        } else {
          r_.note(p, "ignored, as Ray ignores fields it does not know");
        }
      }
    }
    app["cpus"] = cpus;
    // memory is bytes, rounded down by Ray (actor.py:1635-1636); vramsim
    // keeps whole MiB, rounded up.
    const double bytes = std::floor(memory);
    const std::int64_t mb = static_cast<std::int64_t>(std::ceil(bytes / static_cast<double>(kBytesPerMiB)));
    if (static_cast<double>(mb * kBytesPerMiB) != bytes)
      r_.note(ServeConfigReader::at(path, "memory"), "bytes read as whole MiB, rounded up (vramsim keeps memory_mb)");
    app["memory_mb"] = mb;
    if (vram) {
      // BioEngine's VRAM branch gives num_gpus 0.01 beside VRAM_MB
      // (builder.py:432-492@03b490c); gpu_memory_mb sizes it the same way.
      if (gpus && *gpus != 0.01)
        r_.fail(ServeConfigReader::at(path, "num_gpus"),
                "expected num_gpus 0.01 (or none) beside resources.VRAM_MB, as BioEngine sizes a VRAM_MB request; "
                "vramsim models VRAM_MB as gpu_memory_mb, got num_gpus " + format_number(*gpus));
      app["gpu_memory_mb"] = *vram;
    } else if (gpus && *gpus > 0) {
      if (*gpus > 1 && *gpus != std::floor(*gpus))
        r_.fail(ServeConfigReader::at(path, "num_gpus"), "expected a share of one GPU (at most 1) or whole GPUs, got " +
                                                  format_number(*gpus) + " (Ray refuses a fraction above 1)");
      if (*gpus == 1) app["gpu_memory_mb"] = -1;
      else app["num_gpus"] = *gpus;
    }
  }

  Deployment deployment(const Json& d, const std::string& path, const std::string& app_name,
                        const std::string& import_path) {
    r_.mapping(d, path);
    if (!d.contains("name")) r_.fail(ServeConfigReader::at(path, "name"), "expected the deployment's name (required)");
    const std::string name = r_.string(d["name"], ServeConfigReader::at(path, "name"));
    if (name.empty()) r_.fail(ServeConfigReader::at(path, "name"), "expected a non-empty deployment name");
    Json app = Json::object();
    Json serve = Json::object();
    app["ray_serve"] = {{"application", app_name}, {"deployment", name}, {"import_path", import_path}};
    Json num_replicas;  // null: not given
    Json autoscaling_given;
    bool has_autoscaling = false;
    std::int64_t max_ongoing = 5;   // DEFAULT_MAX_ONGOING_REQUESTS (_private/constants.py:265)
    std::int64_t max_queued = -1;   // _private/config.py:159-162
    Json actor = Json();
    for (auto it = d.begin(); it != d.end(); ++it) {
      const std::string& k = it.key();
      const Json& v = it.value();
      const std::string p = ServeConfigReader::at(path, k);
      if (k == "name") continue;
      if (k == "num_replicas") num_replicas = v;
      else if (k == "autoscaling_config") {
        autoscaling_given = v;
        has_autoscaling = !v.is_null();
      } else if (k == "max_ongoing_requests") {
        max_ongoing = r_.integer(v, p, 1, INT64_MAX);
      } else if (k == "max_queued_requests") {
        // A StrictInt, -1 or >= 1 (schema.py:337-343, 614-625).
        if (!v.is_number_integer()) r_.fail(p, std::string("expected an integer (-1 or >= 1), got ") + kind_of(v));
        max_queued = v.get<std::int64_t>();
        if (max_queued < 1 && max_queued != -1)
          r_.fail(p, "expected -1 (no limit) or a positive integer, got " + v.dump());
      } else if (k == "ray_actor_options") {
        actor = v;
      } else if (k == "graceful_shutdown_wait_loop_s" || k == "graceful_shutdown_timeout_s") {
        r_.number(v, p, 0, HUGE_VAL, false);
        r_.note(p, "read, not modelled (a replica stops at once)");
      } else if (k == "health_check_period_s" || k == "health_check_timeout_s") {
        r_.number(v, p, 0, HUGE_VAL, true);
        r_.note(p, "read, not modelled (a GPU replica's memory push follows Ray's default period, 10 s)");
      } else if (k == "logging_config") {
        r_.logging_config(v, p);
      } else if (k == "user_config" || k == "placement_group_bundles" || k == "placement_group_strategy" ||
                 k == "placement_group_bundle_label_selector" || k == "max_replicas_per_node" ||
                 k == "request_router_config" || k == "gang_scheduling_config" || k == "deployment_actors" ||
                 k == "rolling_update_percentage") {
        r_.note(p, "read, not modelled");
      } else if (k == "max_concurrent_queries" && opts_.legacy_names) {
        if (!d.contains("max_ongoing_requests")) max_ongoing = r_.integer(v, p, 1, INT64_MAX);
        r_.note(p, "read as max_ongoing_requests (--legacy-names)");
      } else if (k == "max_concurrent_queries") {
        r_.note(p, "ignored, as Ray ignores it since b610a0be0e (2024-07-16); Ray before read it as "
                   "max_ongoing_requests (--legacy-names)");
      } else {
        r_.note(p, "ignored, as Ray ignores fields it does not know");
      }
    }
    // validate_num_replicas_and_autoscaling_config (schema.py:479-500).
    const std::string np = ServeConfigReader::at(path, "num_replicas");
    bool auto_replicas = false;
    std::optional<std::int64_t> fixed;
    if (!num_replicas.is_null()) {
      if (num_replicas.is_string()) {
        if (num_replicas.get<std::string>() != "auto")
          r_.fail(np, "expected a positive integer or \"auto\", got \"" + num_replicas.get<std::string>() + "\"");
        auto_replicas = true;
      } else if (num_replicas.is_number_integer()) {
        if (has_autoscaling)
          r_.fail(np, "expected no num_replicas beside autoscaling_config (Ray: \"Manually setting num_replicas is "
                      "not allowed when autoscaling_config is provided.\"), or num_replicas \"auto\"");
        fixed = num_replicas.get<std::int64_t>();
        if (*fixed < 1) r_.fail(np, "expected a positive integer or \"auto\", got " + num_replicas.dump());
      } else {
        r_.fail(np, std::string("expected a positive integer or \"auto\", got ") +
                        (num_replicas.is_number() ? num_replicas.dump() : kind_of(num_replicas)));
      }
    }
    actor_options(actor, ServeConfigReader::at(path, "ray_actor_options"), app);
    if (!auto_replicas && !has_autoscaling) {
      const std::int64_t n = capacity_adjusted(fixed.value_or(1), target_capacity_);
      if (n < 1)
        r_.fail(np, "target_capacity " + format_number(*target_capacity_) +
                        " leaves no replica, and a deployment without autoscaling needs at least one in vramsim");
      app["replicas"] = n;
    }
    app["deploy_at"] = "0s";
    serve["max_ongoing_requests"] = max_ongoing;
    serve["max_queued_requests"] = max_queued;
    if (auto_replicas || has_autoscaling)
      serve["autoscaling_config"] = autoscaling(autoscaling_given, ServeConfigReader::at(path, "autoscaling_config"), auto_replicas);
    app["serve"] = serve;
    return Deployment{app, path};
  }

  std::vector<Deployment> application(const Json& a, const std::string& path) {
    r_.mapping(a, path);
    std::string name = "default";  // SERVE_DEFAULT_APP_NAME (_private/constants.py:69)
    if (a.contains("name")) name = r_.string(a["name"], ServeConfigReader::at(path, "name"));
    if (name.empty()) r_.fail(ServeConfigReader::at(path, "name"), "expected a non-empty application name");
    if (!a.contains("import_path"))
      r_.fail(ServeConfigReader::at(path, "import_path"), "expected the application's import_path (required)");
    const std::string ip = r_.string(a["import_path"], ServeConfigReader::at(path, "import_path"));
    check_import_path(r_, ip, ServeConfigReader::at(path, "import_path"));
    for (auto it = a.begin(); it != a.end(); ++it) {
      const std::string& k = it.key();
      const std::string p = ServeConfigReader::at(path, k);
      if (k == "name" || k == "import_path" || k == "deployments") continue;
      if (k == "host" || k == "port")
        r_.fail(p, "expected no " + k + " inside an application (Ray: \"Please remove it and set host/port in the "
                                        "top level deploy config only.\")");
      if (k == "route_prefix") {
        if (!it.value().is_null()) {
          const std::string rp = r_.string(it.value(), p);
          if (!routes_.insert(rp).second)
            r_.fail(p, "duplicate route_prefix \"" + rp + "\" (Ray: each application's route_prefix is unique)");
        }
        r_.note(p, "read, not modelled");
      } else if (k == "logging_config") {
        r_.logging_config(it.value(), p);
      } else if (k == "runtime_env") {
        r_.mapping(it.value(), p);
        r_.note(p, "not modelled beyond its install time (cluster.latency.runtime_env_install)");
      } else if (k == "external_scaler_enabled") {
        if (!it.value().is_boolean()) r_.fail(p, std::string("expected true or false, got ") + kind_of(it.value()));
        r_.note(p, "read, not modelled");
      } else if (k == "autoscaling_policy") {
        r_.note(p, "an application-level autoscaling policy, not modelled: each deployment scales by Ray's "
                   "default policy");
      } else if (k == "args") {
        r_.note(p, "read, not modelled");
      } else {
        r_.note(p, "ignored, as Ray ignores fields it does not know");
      }
    }
    if (!apps_.insert(name).second)
      r_.fail(ServeConfigReader::at(path, "name"), "duplicate application name \"" + name +
                                            "\" (Ray: \"Found multiple configs for application\")");
    const std::string dp = ServeConfigReader::at(path, "deployments");
    if (!a.contains("deployments") || a["deployments"].is_null() ||
        (a["deployments"].is_array() && a["deployments"].empty()))
      r_.fail(dp, "expected the application's deployments: a config that lists none leaves their options to the "
                  "code (" + ip + "), which the file does not show; list each deployment, at least its name");
    if (!a["deployments"].is_array()) r_.fail(dp, std::string("expected a list, got ") + kind_of(a["deployments"]));
    std::vector<Deployment> out;
    std::set<std::string> names;
    const Json& ds = a["deployments"];
    for (std::size_t i = 0; i < ds.size(); ++i) {
      const std::string p = dp + "[" + std::to_string(i) + "]";
      Deployment d = deployment(ds[i], p, name, ip);
      const std::string dn = d.app["ray_serve"]["deployment"];
      if (!names.insert(dn).second)
        r_.fail(ServeConfigReader::at(p, "name"), "deployment \"" + dn + "\" listed twice (Ray applies the second over the "
                                                             "first); list it once");
      out.push_back(std::move(d));
    }
    if (out.size() > 1)
      r_.note(dp, "an application of several deployments: each is imported as its own app (application.deployment), "
                  "which receives its own traffic; the calls from one deployment to another are not modelled");
    const bool external = a.contains("external_scaler_enabled") && a["external_scaler_enabled"] == true;
    for (const auto& d : out) {
      if (external && !d.app.contains("replicas"))
        r_.fail(ServeConfigReader::at(path, "external_scaler_enabled"),
                "expected no autoscaling deployment with external_scaler_enabled (Ray refuses it: " +
                    d.app["ray_serve"]["deployment"].get<std::string>() + ")");
    }
    // One deployment: the app is the application; several: app.deployment.
    for (auto& d : out) {
      const std::string dn = d.app["ray_serve"]["deployment"];
      Json app = Json::object();
      app["id"] = out.size() == 1 ? name : name + "." + dn;
      for (auto it = d.app.begin(); it != d.app.end(); ++it) app[it.key()] = it.value();
      d.app = std::move(app);
    }
    return out;
  }

  RayServeImport run(const Json& root, const std::string& file) {
    r_.mapping(root, "");
    for (auto it = root.begin(); it != root.end(); ++it) {
      const std::string& k = it.key();
      if (k == "applications") continue;
      if (k == "target_capacity") {
        if (!it.value().is_null()) {
          target_capacity_ = r_.number(it.value(), k, 0, 100, false);
          r_.note(k, "target_capacity " + format_number(*target_capacity_) +
                         ": applied to every replica count as Ray's get_capacity_adjusted_num_replicas does");
        }
      } else if (k == "proxy_location") {
        const std::string v = r_.string(it.value(), k);
        if (v != "Disabled" && v != "HeadOnly" && v != "EveryNode")
          r_.fail(k, "expected Disabled, HeadOnly or EveryNode, got \"" + v + "\"");
        r_.note(k, "read, not modelled");
      } else if (k == "http_options" || k == "grpc_options") {
        r_.mapping(it.value(), k);
        r_.note(k, "read, not modelled");
      } else if (k == "logging_config") {
        r_.logging_config(it.value(), k);
      } else {
        r_.note(k, "ignored, as Ray ignores fields it does not know");
      }
    }
    if (!root.contains("applications"))
      r_.fail("applications", "expected the applications list (required in Ray's ServeDeploySchema)");
    const Json& apps = root["applications"];
    if (!apps.is_array()) r_.fail("applications", std::string("expected a list, got ") + kind_of(apps));
    std::vector<Deployment> all;
    std::size_t applications = 0;
    for (std::size_t i = 0; i < apps.size(); ++i) {
      auto ds = application(apps[i], "applications[" + std::to_string(i) + "]");
      ++applications;
      for (auto& d : ds) all.push_back(std::move(d));
    }
    std::set<std::string> ids;
    for (const auto& d : all)
      if (!ids.insert(d.app["id"].get<std::string>()).second)
        r_.fail(d.yaml_path, "two deployments import as app \"" + d.app["id"].get<std::string>() +
                                 "\" (an application's name clashes with application.deployment); rename one");

    RayServeImport out;
    Json& s = out.scenario;
    s = Json::object();
    std::string stem = file;
    if (auto slash = stem.find_last_of('/'); slash != std::string::npos) stem = stem.substr(slash + 1);
    if (auto dot = stem.find_last_of('.'); dot != std::string::npos && dot > 0) stem = stem.substr(0, dot);
    s["name"] = stem;
    std::ostringstream desc;
    desc << "Imported by vramsim import ray-serve from " << file << " (a Ray Serve config): " << applications
         << (applications == 1 ? " application, " : " applications, ") << all.size()
         << (all.size() == 1 ? " deployment" : " deployments")
         << ", each an app deployed at 0 s through the control plane; fields the file leaves out take Ray's "
            "defaults (values set in the code are not in a config file). Traffic and service times are not part "
            "of a Serve config: add serve.traffic and serve.service_time to each app (docs/serving.md). Cluster: "
         << (opts_.cluster_scenario ? "from " + opts_.cluster_file : std::string("the import's default (docs/import.md)"))
         << ".";
    s["description"] = desc.str();
    if (opts_.cluster_scenario) {
      if (!opts_.cluster_scenario->is_object() || !opts_.cluster_scenario->contains("cluster"))
        throw ScenarioError(opts_.cluster_file, "$.cluster", "expected a scenario with a cluster object to keep");
      s["cluster"] = (*opts_.cluster_scenario)["cluster"];
    } else {
      s["cluster"] = default_cluster();
    }
    s["apps"] = Json::array();
    for (const auto& d : all) s["apps"].push_back(d.app);
    paths_.clear();
    for (const auto& d : all) paths_.push_back(d.yaml_path);
    return out;
  }

  const std::vector<std::string>& app_paths() const { return paths_; }

 private:
  ServeConfigReader& r_;
  const RayServeImportOptions& opts_;
  std::optional<double> target_capacity_;
  std::set<std::string> apps_, routes_;
  std::vector<std::string> paths_;
};

}  // namespace

RayServeImport import_ray_serve_config(const std::string& yaml_text, const std::string& file,
                                       const RayServeImportOptions& opts) {
  return import_ray_serve_document(read_yaml(yaml_text, file), file, opts);
}

RayServeImport import_ray_serve_document(const YamlDocument& doc, const std::string& file,
                                         const RayServeImportOptions& opts) {
  std::vector<std::string> notes;
  ServeConfigReader reader(doc, file, notes);
  Importer importer(reader, opts);
  RayServeImport out = importer.run(doc.value, file);
  out.notes = std::move(notes);
  // What vramsim cannot represent (its own ranges) is refused here, at the
  // deployment the value came from.
  try {
    parse_scenario(out.scenario, file);
  } catch (const ScenarioError& e) {
    std::string where = "(top level)";
    const std::string prefix = "$.apps[";
    if (e.path().rfind(prefix, 0) == 0) {
      const std::size_t i = std::stoul(e.path().substr(prefix.size()));
      if (i < importer.app_paths().size()) where = reader.where(importer.app_paths()[i]);
    } else if (opts.cluster_scenario && e.path().rfind("$.cluster", 0) == 0) {
      throw ScenarioError(opts.cluster_file, e.path(), e.problem());
    }
    throw ScenarioError(file, where, "vramsim cannot represent it: " + e.path() + ": " + e.problem());
  }
  return out;
}

}  // namespace vramsim
