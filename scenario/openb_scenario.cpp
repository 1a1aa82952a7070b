#include "scenario/openb_scenario.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "engine/format.hpp"
#include "models/fragmentation.hpp"
#include "models/gpu_models.hpp"
#include "workload/openb.hpp"

namespace vramsim {

namespace {

[[noreturn]] void fail(const Scenario& s, const std::string& path, const std::string& problem) {
  throw ScenarioError(s.file, path, problem);
}

std::string text_field(const Scenario& s, const Json& w, const std::string& path, const char* key) {
  if (!w.contains(key)) fail(s, path, std::string("missing field \"") + key + "\"");
  const Json& v = w.at(key);
  if (!v.is_string() || v.get<std::string>().empty()) fail(s, path + "." + key, "expected a non-empty string");
  return v.get<std::string>();
}

// A trace path as written, relative to the scenario file's folder.
std::string resolve(const Scenario& s, const std::string& p) {
  const std::filesystem::path fp(p);
  if (fp.is_absolute()) return p;
  return (std::filesystem::path(s.file).parent_path() / fp).lexically_normal().string();
}

double number_field(const Scenario& s, const Json& v, const std::string& path, double min, double max,
                    bool min_open) {
  if (!v.is_number()) fail(s, path, "expected a number");
  const double x = v.get<double>();
  if (!(min_open ? x > min : x >= min) || !(x <= max))
    fail(s, path, std::string("expected a number in ") + (min_open ? "(" : "[") + format_number(min) + ", " +
                      format_number(max) + "], got " + v.dump());
  return x;
}

void apply_overrides(const Scenario& s, const Json& o, const std::string& path, GpuModelSet& models) {
  if (!o.is_object()) fail(s, path, "expected an object of GPU model name -> {vram_mb, fp16_tflops}");
  for (auto it = o.begin(); it != o.end(); ++it) {
    const std::string p = path + "." + it.key();
    const Json& m = it.value();
    if (!m.is_object()) fail(s, p, "expected an object {\"vram_mb\": MB, \"fp16_tflops\": x}");
    for (auto f = m.begin(); f != m.end(); ++f)
      if (f.key() != "vram_mb" && f.key() != "fp16_tflops")
        fail(s, p + "." + f.key(), "unknown field (expected vram_mb or fp16_tflops)");
    const GpuModel* base = models.find(it.key());
    if (!base && !(m.contains("vram_mb") && m.contains("fp16_tflops")))
      fail(s, p, "a model not in the table needs both vram_mb and fp16_tflops");
    std::int64_t vram = base ? base->vram_mb : 0;
    double tflops = base ? base->fp16_tflops : 0;
    if (m.contains("vram_mb")) {
      const Json& v = m.at("vram_mb");
      if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > limits::kMaxVramMb)
        fail(s, p + ".vram_mb", "expected an integer in [1, " + std::to_string(limits::kMaxVramMb) + "], got " + v.dump());
      vram = v.get<std::int64_t>();
    }
    if (m.contains("fp16_tflops")) tflops = number_field(s, m.at("fp16_tflops"), p + ".fp16_tflops", 0, 1e6, false);
    models.set(it.key(), vram, tflops);
  }
}

Duration scaled(std::int64_t seconds, double scale) {
  return static_cast<Duration>(std::llround(static_cast<double>(seconds) * scale * 1000.0)) * kMillisecond;
}

// The workload object's own fields, checked before any file is read.
struct OpenbOptions {
  std::string nodes_path, pods_path;
  std::size_t limit = 0;
  double scale = 1.0;
  // trace: deploy at creation, delete at deletion. arrivals: the FGD
  // paper's replay, pods in creation order one per interval, never deleted.
  std::string replay = "trace";
  Duration interval = kSecond;
  GpuModelSet models;
};

OpenbOptions parse_openb_options(const Json& w, const std::string& path, Scenario& s) {
  if (!w.is_object()) fail(s, path, "expected an object");
  static const std::set<std::string> known = {"source", "nodes", "pods", "limit", "time_scale", "gpu_models",
                                             "samples", "replay", "interval"};
  for (auto it = w.begin(); it != w.end(); ++it)
    if (!known.count(it.key()))
      fail(s, path + "." + it.key(), "unknown field (expected one of: source, nodes, pods, limit, time_scale, gpu_models, samples, replay, "
           "interval)");
  if (text_field(s, w, path, "source") != "openb") fail(s, path + ".source", "expected \"openb\"");
  OpenbOptions o;
  o.nodes_path = resolve(s, text_field(s, w, path, "nodes"));
  o.pods_path = resolve(s, text_field(s, w, path, "pods"));
  if (w.contains("limit")) {
    const Json& v = w.at("limit");
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > limits::kMaxReplicas)
      fail(s, path + ".limit", "expected an integer in [0, " + std::to_string(limits::kMaxReplicas) + "] (0: all pods)");
    o.limit = static_cast<std::size_t>(v.get<std::int64_t>());
  }
  if (w.contains("time_scale")) o.scale = number_field(s, w.at("time_scale"), path + ".time_scale", 0, 1, true);
  if (w.contains("replay")) o.replay = text_field(s, w, path, "replay");
  if (o.replay != "trace" && o.replay != "arrivals")
    fail(s, path + ".replay", "expected \"trace\" or \"arrivals\", got \"" + o.replay + "\"");
  if (w.contains("interval")) {
    if (o.replay != "arrivals") fail(s, path + ".interval", "applies only with \"replay\": \"arrivals\"");
    const Json& v = w.at("interval");
    std::optional<Duration> d;
    if (v.is_string()) d = parse_duration(v.get<std::string>());
    else if (v.is_number() && v.get<double>() >= 0 && v.get<double>() <= 86400) d = seconds(v.get<double>());
    if (!d || *d <= 0 || *d > kHour)
      fail(s, path + ".interval", "expected a duration in (0, 1h], got " + v.dump());
    o.interval = *d;
  }
  if (o.replay == "arrivals" && w.contains("time_scale"))
    fail(s, path + ".time_scale", "applies only with \"replay\": \"trace\"");
  s.utilisation_samples = 100;
  if (w.contains("samples")) {
    const Json& v = w.at("samples");
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 10000)
      fail(s, path + ".samples", "expected an integer in [0, 10000]");
    s.utilisation_samples = static_cast<int>(v.get<std::int64_t>());
  }
  if (w.contains("gpu_models")) apply_overrides(s, w.at("gpu_models"), path + ".gpu_models", o.models);
  return o;
}

constexpr double kGpuSpecAsk = 0.001;  // per pod, as Ray asks for an accelerator type

// One partition node and one warm worker taking all of it per trace node;
// returns the smallest GPU's VRAM (0: no GPU), what a sharing pod's
// gpu_milli is a share of.
std::int64_t add_openb_nodes(const std::vector<OpenbNode>& nodes, const std::vector<OpenbPod>& pods,
                             const OpenbOptions& o, const std::string& path, Scenario& s, OpenbImport& im) {
  // Every gpu_spec in the pod list: a node offers each one naming its model.
  std::map<std::string, std::string> specs;  // resource -> "|"-joined models, with '|' around
  for (const auto& p : pods)
    if (!p.gpu_spec.empty()) {
      std::string joined = "|";
      for (const auto& m : p.gpu_spec) joined += m + "|";
      specs.emplace(accelerator_resource(p.gpu_spec), joined);
    }
  std::int64_t min_vram = 0;
  for (const auto& n : nodes) {
    const auto where = "line " + std::to_string(n.line);
    PartitionNodeType t;
    t.count = 1;
    t.cpus = static_cast<int>(std::max<std::int64_t>(1, n.cpu_milli / 1000));
    if (t.cpus > limits::kMaxCpus)
      throw ScenarioError(o.nodes_path, where + ", column 2 (cpu_milli)",
                          "expected at most " + std::to_string(limits::kMaxCpus) + " cores");
    t.memory_gb = std::max<std::int64_t>(1, n.memory_mib / 1024);
    t.gpus = n.gpus;
    t.gpu_model.clear();
    t.accelerator_type.clear();
    t.gpu_memory_mb = 0;
    if (n.gpus > 0) {
      const GpuModel* m = o.models.find(n.model);
      if (!m)
        throw ScenarioError(o.nodes_path, where + ", column 5 (model)",
                            "unknown GPU model '" + n.model + "' (add it under " + path + ".gpu_models)");
      t.gpu_model = m->device_name;
      t.gpu_name = m->name;
      t.accelerator_type = n.model;
      t.gpu_memory_mb = m->vram_mb;
      t.cuda_total_mb = m->cuda_total_mb;
      for (const auto& [resource, models] : specs)
        if (models.find("|" + n.model + "|") != std::string::npos) t.gpu_labels[resource] = 1.0;
      min_vram = min_vram == 0 ? m->vram_mb : std::min(min_vram, m->vram_mb);
    }
    s.slurm.nodes.push_back(t);
    // The worker takes the whole node: its GPUs, cores and (rounded down to
    // whole GB per core) memory, for longer than any horizon.
    WorkerJobSize z;
    z.gpus = t.gpus;
    z.cpus = t.cpus;
    z.mem_per_cpu_gb = static_cast<int>(std::max<std::int64_t>(1, t.memory_gb / t.cpus));
    z.time_limit = limits::kMaxDuration;
    s.warm_workers.push_back(z);
    ++im.nodes;
    im.gpus += static_cast<std::size_t>(n.gpus);
  }
  // Every node is a warm worker: max_workers is at least their count, and
  // exactly it unless the scenario states more.
  const int stated = s.max_workers_stated ? s.control.autoscaler.max_workers : 0;
  s.control.autoscaler.max_workers = std::max(stated, static_cast<int>(nodes.size()));
  im.share_vram_mb = min_vram;
  return min_vram;
}

// A pod as an app: its size, and what its GPU request counts as.
AppSpec openb_app(const OpenbPod& p, std::int64_t min_vram, const std::string& pods_path, OpenbImport& im) {
  AppSpec a;
  a.id = p.name;
  // One replica, a multi-GPU pod's included: its GPUs are one request,
  // placed all on one node or not at all.
  a.cpus = static_cast<double>(p.cpu_milli) / 1000.0;
  a.memory_bytes = p.memory_mib * (std::int64_t{1} << 20);
  a.proxy_memory_bytes = 0;  // a scheduler's pod, not a BioEngine app
  if (p.num_gpu == 0) {
    ++im.cpu_pods;
  } else if (p.sharing()) {
    // The share of the smallest GPU: the fraction sizing divides by that
    // size, so the replica asks for gpu_milli / 1000 of a GPU.
    if (min_vram == 0)
      throw ScenarioError(pods_path, "line " + std::to_string(p.line) + ", column 5 (gpu_milli)",
                          "a GPU-sharing pod, but the node list has no GPU");
    a.gpu_memory_mb = std::max<std::int64_t>(1, std::llround(static_cast<double>(p.gpu_milli) *
                                                             static_cast<double>(min_vram) / 1000.0));
    a.gpu_milli = p.gpu_milli;  // the fraction asked for exactly, not rounded
    // A pod of a scheduler's trace, not a replica process: its share is
    // taken as all it holds (no CUDA context beyond it, no constructor to
    // run out of memory).
    a.cuda_context_mb = 0;
    a.device_memory_checked = false;
    ++im.sharing_pods;
  } else {
    a.gpu_memory_mb = -1;
    if (p.num_gpu > 1) {
      a.gpu_milli = std::int64_t{1000} * p.num_gpu;  // whole GPUs, one gang
      ++im.multi_gpu_pods;
    }
  }
  if (!p.gpu_spec.empty()) {
    // Placed only on nodes of the models it names.
    a.resources[accelerator_resource(p.gpu_spec)] = kGpuSpecAsk;
    ++im.pods_with_gpu_spec;
  }
  return a;
}

// Every pod as an app with its deploy (and, replaying the trace, its
// delete); returns the last action's time.
SimTime add_openb_pods(std::vector<OpenbPod>& pods, std::int64_t min_vram, const OpenbOptions& o, Scenario& s,
                       OpenbImport& im) {
  if (o.replay == "arrivals")
    std::stable_sort(pods.begin(), pods.end(),
                     [](const OpenbPod& a, const OpenbPod& b) { return a.creation_time < b.creation_time; });
  SimTime last = 0;
  std::size_t arrived = 0;
  for (const auto& p : pods) {
    AppSpec a = openb_app(p, min_vram, o.pods_path, im);
    ScenarioAction deploy;
    deploy.at = scaled(p.creation_time, o.scale);
    deploy.kind = ActionKind::Deploy;
    deploy.app = a.id;
    deploy.json_path = o.pods_path + ":" + std::to_string(p.line);
    if (o.replay == "arrivals") {
      deploy.at = static_cast<Duration>(++arrived) * o.interval;
      last = std::max(last, deploy.at);
      s.actions.push_back(deploy);
    } else {
      ScenarioAction del = deploy;
      del.at = scaled(p.deletion_time, o.scale);
      del.kind = ActionKind::Delete;
      last = std::max(last, del.at);
      s.actions.push_back(deploy);
      s.actions.push_back(del);
    }
    s.apps.push_back(std::move(a));
    ++im.pods;
  }
  return last;
}

}  // namespace

OpenbImport apply_openb_workload(const Json& w, const std::string& path, bool horizon_given, Scenario& s) {
  OpenbOptions o = parse_openb_options(w, path, s);
  // The trace's nodes are the partition; they run from t=0 on, so there is
  // nothing to autoscale.
  if (s.control.slurm_mode)
    fail(s, "$.cluster.mode", "expected \"static\" with an openb workload (one warm worker per trace node)");
  if (s.initial_workers > 0)
    fail(s, "$.cluster.initial_workers", "expected none with an openb workload (each trace node has its worker)");
  s.slurm.nodes.clear();

  std::vector<OpenbNode> nodes;
  std::vector<OpenbPod> pods;
  try {
    nodes = load_openb_nodes(o.nodes_path);
    pods = load_openb_pods(o.pods_path, o.limit);
  } catch (const OpenbError& e) {
    throw ScenarioError(e.file(), e.where(), e.problem());
  }
  if (static_cast<std::int64_t>(nodes.size()) > limits::kMaxNodes)
    throw ScenarioError(o.nodes_path, "file", "expected at most " + std::to_string(limits::kMaxNodes) + " nodes");

  OpenbImport im;
  const std::int64_t min_vram = add_openb_nodes(nodes, pods, o, path, s, im);
  const SimTime last = add_openb_pods(pods, min_vram, o, s, im);
  s.workload_summary = "openb workload: " + std::to_string(im.nodes) + " nodes (" + std::to_string(im.gpus) +
                       " GPUs), " + std::to_string(im.pods) + " pods: " + std::to_string(im.sharing_pods) +
                       " GPU shares, " + std::to_string(im.multi_gpu_pods) + " multi-GPU, " +
                       std::to_string(im.cpu_pods) + " CPU-only; " + std::to_string(im.pods_with_gpu_spec) +
                       " with a gpu_spec, placed only on the GPU models it names";
  if (!horizon_given) {
    s.horizon = last + kMinute;
    if (s.horizon > limits::kMaxHorizon)
      fail(s, path + (o.replay == "trace" ? ".time_scale" : ".interval"),
           "the pods span " + format_duration(last) + "; the horizon is at most " +
               format_duration(limits::kMaxHorizon) + " (lower time_scale or interval, set a limit, or set $.horizon)");
  }
  return im;
}

}  // namespace vramsim
