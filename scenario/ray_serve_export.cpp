// Ray Serve config files out: a scenario's apps as the applications and
// deployments of a Serve config (docs/import.md, "Export").
#include "scenario/ray_serve_config.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <map>

#include "engine/format.hpp"
#include "scenario/yaml_document.hpp"

namespace vramsim {

namespace {

// A string that would read back as another type ("yes", "123") is quoted.
void emit_string(YAML::Emitter& y, const std::string& s) {
  if (yaml_plain_reads_as_string(s)) y << s;
  else y << YAML::DoubleQuoted << s;
}

void emit_number(YAML::Emitter& y, double x) {
  if (x == std::floor(x) && std::fabs(x) < 1e15) y << static_cast<std::int64_t>(x);
  else y << format_number(x);
}

}  // namespace

RayServeExport export_ray_serve_config(const Scenario& s) {
  RayServeExport out;
  // Applications in order of first appearance; their deployments in app order.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const AppSpec*>> by_app;
  std::map<std::string, std::string> import_paths;
  for (const auto& a : s.apps) {
    const std::string app = a.ray_serve ? a.ray_serve->application : a.id;
    if (!by_app.count(app)) order.push_back(app);
    by_app[app].push_back(&a);
    const std::string ip = a.ray_serve ? a.ray_serve->import_path : a.id + ":app";
    if (!a.ray_serve) out.notes.push_back("app " + a.id + ": import_path " + ip + " is a placeholder (put your module:app)");
    auto [it, fresh] = import_paths.emplace(app, ip);
    if (!fresh && it->second != ip)
      out.notes.push_back("app " + a.id + ": its import_path " + ip + " differs from its application's (" + it->second +
                          "); the first is written");
  }
  std::set<std::string> dropped;
  YAML::Emitter y;
  y << YAML::BeginMap << YAML::Key << "applications" << YAML::Value << YAML::BeginSeq;
  for (const auto& app : order) {
    y << YAML::BeginMap << YAML::Key << "name" << YAML::Value;
    emit_string(y, app);
    y << YAML::Key << "import_path" << YAML::Value;
    emit_string(y, import_paths.at(app));
    y << YAML::Key << "deployments" << YAML::Value << YAML::BeginSeq;
    for (const AppSpec* a : by_app.at(app)) {
      y << YAML::BeginMap << YAML::Key << "name" << YAML::Value;
      emit_string(y, a->ray_serve ? a->ray_serve->deployment : a->id);
      const ServeSpec serve = a->serve.value_or(ServeSpec{});
      if (!a->serve || !a->serve->autoscaling) y << YAML::Key << "num_replicas" << YAML::Value << a->replicas;
      y << YAML::Key << "max_ongoing_requests" << YAML::Value << serve.max_ongoing_requests;
      y << YAML::Key << "max_queued_requests" << YAML::Value << serve.max_queued_requests;
      if (a->serve && a->serve->autoscaling) {
        const auto& c = *a->serve->autoscaling;
        y << YAML::Key << "autoscaling_config" << YAML::Value << YAML::BeginMap;
        y << YAML::Key << "min_replicas" << YAML::Value << c.min_replicas;
        y << YAML::Key << "max_replicas" << YAML::Value << c.max_replicas;
        if (c.initial_replicas) y << YAML::Key << "initial_replicas" << YAML::Value << *c.initial_replicas;
        y << YAML::Key << "target_ongoing_requests" << YAML::Value;
        emit_number(y, c.target_ongoing_requests);
        y << YAML::Key << "metrics_interval_s" << YAML::Value;
        emit_number(y, c.metrics_interval_s);
        y << YAML::Key << "look_back_period_s" << YAML::Value;
        emit_number(y, c.look_back_period_s);
        y << YAML::Key << "upscale_delay_s" << YAML::Value;
        emit_number(y, c.upscale_delay_s);
        y << YAML::Key << "downscale_delay_s" << YAML::Value;
        emit_number(y, c.downscale_delay_s);
        if (c.downscale_to_zero_delay_s) {
          y << YAML::Key << "downscale_to_zero_delay_s" << YAML::Value;
          emit_number(y, *c.downscale_to_zero_delay_s);
        }
        y << YAML::Key << "smoothing_factor" << YAML::Value;
        emit_number(y, c.smoothing_factor);
        if (c.upscaling_factor) {
          y << YAML::Key << "upscaling_factor" << YAML::Value;
          emit_number(y, *c.upscaling_factor);
        }
        if (c.downscaling_factor) {
          y << YAML::Key << "downscaling_factor" << YAML::Value;
          emit_number(y, *c.downscaling_factor);
        }
        if (c.aggregation_function != MetricAggregation::kMean)
          y << YAML::Key << "aggregation_function" << YAML::Value << aggregation_name(c.aggregation_function);
        if (c.policy != "ray") dropped.insert("autoscaling_config.policy " + c.policy + " (vramsim's own)");
        y << YAML::EndMap;
      }
      y << YAML::Key << "ray_actor_options" << YAML::Value << YAML::BeginMap;
      y << YAML::Key << "num_cpus" << YAML::Value;
      emit_number(y, a->cpus);
      const bool gpu = !a->disable_gpu;
      if (gpu && a->num_gpus) {
        y << YAML::Key << "num_gpus" << YAML::Value;
        emit_number(y, *a->num_gpus);
      } else if (gpu && a->gpu_memory_mb && *a->gpu_memory_mb == -1) {
        y << YAML::Key << "num_gpus" << YAML::Value << 1;
      } else if (gpu && a->gpu_memory_mb && *a->gpu_memory_mb > 0) {
        // What BioEngine asks for on a cluster that advertises VRAM_MB.
        y << YAML::Key << "num_gpus" << YAML::Value << "0.01";
      }
      if (a->memory_bytes > 0) y << YAML::Key << "memory" << YAML::Value << a->memory_bytes;
      if (gpu && a->gpu_memory_mb && *a->gpu_memory_mb > 0)
        y << YAML::Key << "resources" << YAML::Value << YAML::BeginMap << YAML::Key << "VRAM_MB" << YAML::Value
          << *a->gpu_memory_mb << YAML::EndMap;
      y << YAML::EndMap;
      y << YAML::EndMap;
      if (a->disable_gpu && a->gpu_memory_mb && *a->gpu_memory_mb != 0) dropped.insert("disable_gpu (written as no GPU)");
      if (a->observed_vram_mb) dropped.insert("observed_vram_mb");
      if (a->cuda_context_mb != s.cuda_context_mb) dropped.insert("cuda_context_mb");
      if (a->kind != "plain") dropped.insert("kind");
      if (a->serve) {
        if (s.traffic.count(a->id)) dropped.insert("serve.traffic");
        dropped.insert("serve.service_time and the sharing curves (a replica's work)");
        if (a->serve->request_timeout) dropped.insert("serve.request_timeout_s");
        if (a->serve->slo_latency) dropped.insert("serve.slo_latency_s");
      }
    }
    y << YAML::EndSeq << YAML::EndMap;
  }
  y << YAML::EndSeq << YAML::EndMap;
  if (!y.good()) throw std::logic_error("export ray-serve: YAML emitter: " + y.GetLastError());
  out.yaml = std::string(y.c_str()) + "\n";
  dropped.insert("the cluster, actions and expectations");
  for (const auto& d : dropped) out.notes.push_back("not part of a Serve config, left out: " + d);
  return out;
}

}  // namespace vramsim
