// $.cluster: one function per sub-object, called in the order fields were
// always checked (the first error a file has is the one reported).
#include <filesystem>

#include "scenario/cluster_spec.hpp"
#include "scenario/background.hpp"
#include "scenario/scenario_parse.hpp"
#include "workload/openb.hpp"
#include "workload/swf.hpp"

namespace vramsim {

namespace scenario_parse {
namespace {

using scenario_fields::enum_field;
using scenario_fields::lookup_gpu;
using scenario_fields::parse_latency;

void parse_head(Obj& co, Scenario& s) {
  const Json* h = co.get("head");
  if (!h) return;
  Obj ho(*h, co.at("head"), co.file());
  s.head.ip = ho.string("ip", s.head.ip);
  s.head.cpus = static_cast<int>(ho.integer("cpus", s.head.cpus, 0, limits::kMaxCpus));
  s.head.memory_gb = ho.integer("memory_gb", s.head.memory_gb, 0, limits::kMaxMemoryGb);
  s.head.gpus = static_cast<int>(ho.integer("gpus", s.head.gpus, 0, limits::kMaxGpus));
  s.head.gpu = ho.string("gpu", "");
  if (s.head.gpus > 0) {
    if (s.head.gpu.empty()) ho.fail(ho.at("gpu"), "expected a GPU model name when gpus > 0");
    lookup_gpu(ho, ho.at("gpu"), s.head.gpu);
  }
  s.head.mig_enabled = ho.boolean("mig", false);
  ho.finish();
}

void parse_worker_defaults(Obj& co, AutoscalerConfig& as) {
  const Json* w = co.get("worker_defaults");
  if (!w) return;
  Obj wo(*w, co.at("worker_defaults"), co.file());
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
  SlurmJobOptions& so = as.defaults.slurm;
  for (auto [field, target] : {std::pair<const char*, std::string*>{"partition", &so.partition},
                               {"account", &so.account},
                               {"qos", &so.qos},
                               {"gpu_type", &so.gpu_type},
                               {"constraint", &so.constraint},
                               {"reservation", &so.reservation}}) {
    if (!wo.get(field)) continue;
    *target = wo.string(field, "");
    if (target->empty()) wo.fail(wo.at(field), "expected a non-empty string");
    if (const std::string why = slurm_option_problem(field, *target); !why.empty())
      wo.fail(wo.at(field), why.substr(why.find(": ") + 2));
  }
  wo.finish();
}

// min/max workers, then the warm workers (a count, or {count, size}).
void parse_workers(Obj& co, Scenario& s) {
  auto& as = s.control.autoscaler;
  as.min_workers = static_cast<int>(co.integer("min_workers", as.min_workers, 0, limits::kMaxWorkers));
  as.max_workers = static_cast<int>(co.integer("max_workers", as.max_workers, 0, limits::kMaxWorkers));
  s.max_workers_stated = co.has("max_workers");
  if (as.max_workers < as.min_workers) co.fail(co.at("max_workers"), "expected max_workers >= min_workers");
  s.initial_worker_size = WorkerJobSize{as.defaults.gpus, as.defaults.cpus, as.defaults.mem_per_cpu_gb,
                                        as.defaults.time_limit, {}, as.defaults.slurm};
  const Json* iw = co.get("initial_workers");
  if (!iw) return;
  if (!iw->is_object()) {
    s.initial_workers = static_cast<int>(co.integer("initial_workers", 0, 0, limits::kMaxWorkers));
    return;
  }
  Obj io(*iw, co.at("initial_workers"), co.file());
  s.initial_workers = static_cast<int>(io.integer("count", 1, 0, limits::kMaxWorkers));
  auto& z = s.initial_worker_size;
  z.gpus = static_cast<int>(io.integer("gpus", z.gpus, 0, limits::kMaxGpus));
  z.cpus = static_cast<int>(io.integer("cpus", z.cpus, 1, limits::kMaxCpus));
  z.mem_per_cpu_gb = static_cast<int>(io.integer("mem_per_cpu_gb", z.mem_per_cpu_gb, 1, limits::kMaxMemPerCpuGb));
  io.finish();
}

PartitionNodeType parse_node_type(Obj& no) {
  PartitionNodeType t;
  t.count = static_cast<int>(no.integer("count", 1, 1, limits::kMaxNodes));
  t.cpus = static_cast<int>(no.integer("cpus", 64, 1, limits::kMaxCpus));
  t.memory_gb = no.integer("memory_gb", 1024, 1, limits::kMaxMemoryGb);
  t.gpus = static_cast<int>(no.integer("gpus", 1, 0, limits::kMaxGpus));
  const std::string gpu = no.string("gpu", "A100-SXM4-40GB");
  const auto& info = lookup_gpu(no, no.at("gpu"), gpu);
  t.gpu_model = info.device_name;
  t.gpu_name = gpu;
  t.accelerator_type = info.accelerator_type;
  t.gpu_memory_mb = info.memory_mb;
  t.cuda_total_mb = info.cuda_total_mb;
  const std::string smi = no.string("nvidia_smi", "ok");
  if (smi != "ok" && smi != "missing" && smi != "fails")
    no.fail(no.at("nvidia_smi"), "expected \"ok\", \"missing\" or \"fails\", got \"" + smi + "\"");
  t.nvidia_smi_present = smi != "missing";
  t.nvidia_smi_fails = smi == "fails";
  t.mig_enabled = no.boolean("mig", false);
  no.finish();
  return t;
}

// The partition's node types and the scheduler that shares them.
void parse_partition(Obj& co, Scenario& s) {
  if (const Json* p = co.get("partition")) {
    if (!p->is_array() || p->empty()) co.fail(co.at("partition"), "expected a non-empty array of node types");
    for (std::size_t i = 0; i < p->size(); ++i) {
      Obj no((*p)[i], co.at("partition") + "[" + std::to_string(i) + "]", co.file());
      s.slurm.nodes.push_back(parse_node_type(no));
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
}

// A background load: the trace is read here, so a bad trace is a scenario
// error naming the field.
void parse_background(Obj& co, Scenario& s) {
  const Json* b = co.get("background");
  if (!b) return;
  const std::string& file = co.file();
  Obj bo(*b, co.at("background"), file);
  BackgroundSpec spec;
  spec.source = bo.has("source") ? enum_field(bo, "source", {"swf", "batsim", "openb"}, "a trace format") : "swf";
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
    s.background_skipped = load.skipped();
    s.background_skipped_gpus = load.too_many_gpus;
    s.warnings.insert(s.warnings.end(), load.warnings.begin(), load.warnings.end());
  } catch (const WorkloadError& e) {
    bo.fail(bo.at("path"), e.what());
  } catch (const OpenbError& e) {
    bo.fail(bo.at("path"), e.what());
  }
}

// Every cluster.latency field, read from a scenario's block or a calibrated
// model's (`vramsim calibrate`); fields absent keep their current value.
void parse_latency_fields(Obj& lo, Scenario& s) {
  ControlConfig& cc = s.control;
  s.slurm.queue_wait = parse_latency(lo, "queue_wait", s.slurm.queue_wait);
  s.slurm.node_boot = parse_latency(lo, "node_boot", s.slurm.node_boot);
  s.slurm.registration = parse_latency(lo, "registration", s.slurm.registration);
  s.slurm.ray_stop = parse_latency(lo, "ray_stop", s.slurm.ray_stop);
  s.slurm.cancel_latency = parse_latency(lo, "cancel", s.slurm.cancel_latency);
  // "never" (the default): the job runs on after ray stop until scancel.
  if (const Json* exit = lo.get("job_exit_after_stop"); exit && exit->is_string() && *exit == "never") {
    s.slurm.job_exit_after_stop.reset();
  } else if (exit) {
    try {
      s.slurm.job_exit_after_stop = parse_latency(lo, "job_exit_after_stop", LatencyModel::fixed(0));
    } catch (const ScenarioError&) {
      if (!exit->is_string()) throw;
      lo.fail(lo.at("job_exit_after_stop"),
              "expected \"never\" or a non-negative duration such as \"60s\", got " + exit->dump());
    }
  }
  s.slurm.call = parse_latency(lo, "call", s.slurm.call);
  cc.runtime_env_install = parse_latency(lo, "runtime_env_install", cc.runtime_env_install);
  cc.replica_init = parse_latency(lo, "replica_init", cc.replica_init);
  cc.proxy_env_install = parse_latency(lo, "proxy_env_install", cc.proxy_env_install);
  cc.dashboard_first_report = parse_latency(lo, "dashboard_first_report", cc.dashboard_first_report);
  cc.serve_shutdown = parse_latency(lo, "serve_shutdown", cc.serve_shutdown);
  cc.ray_shutdown = parse_latency(lo, "ray_shutdown", cc.ray_shutdown);
  cc.head_ray_stop = parse_latency(lo, "head_ray_stop", cc.head_ray_stop);
  cc.head_exit = parse_latency(lo, "head_exit", cc.head_exit);
}

// `latency.from`: a path relative to the scenario file's folder.
std::string latency_model_path(const Obj& lo, const Json& from) {
  if (!from.is_string() || from.get<std::string>().empty())
    lo.fail(lo.at("from"), "expected the path of a calibrated latency model (vramsim calibrate -o FILE)");
  const std::filesystem::path p(from.get<std::string>());
  if (p.is_absolute()) return p.string();
  return (std::filesystem::path(lo.file()).parent_path() / p).string();
}

// A calibrated model file's latency block.
// Returns whether the model sets a queue wait.
bool parse_latency_model(Obj& lo, const Json& from, Scenario& s) {
  const std::string model_file = latency_model_path(lo, from);
  const Json model = read_json_file(model_file);
  Obj mo(model, "$", model_file);
  const std::string format = mo.string("format", std::string(kLatencyModelFormat));
  if (format != kLatencyModelFormat)
    mo.fail(mo.at("format"), "expected \"" + std::string(kLatencyModelFormat) + "\", got \"" + format + "\"");
  for (const char* k : {"traces", "criterion", "min_samples", "notes", "fit"}) mo.get(k);
  const Json* ml = mo.get("latency");
  if (!ml) mo.fail(mo.at("latency"), "expected the latency object of a calibrated model");
  Obj mlo(*ml, mo.at("latency"), model_file);
  const bool has_queue_wait = mlo.has("queue_wait");
  parse_latency_fields(mlo, s);
  mlo.finish();
  mo.finish();
  return has_queue_wait;
}

void parse_latency_section(Obj& co, Scenario& s) {
  const Json* l = co.get("latency");
  if (!l) return;
  Obj lo(*l, co.at("latency"), co.file());
  // A calibrated model first; the fields beside `from` override it.
  const Json* from = lo.get("from");
  const bool model_queue_wait = from && parse_latency_model(lo, *from, s);
  // That queue wait was measured on a partition with its own contention; a
  // background load here simulates contention again.
  if (model_queue_wait && !lo.has("queue_wait") && !s.slurm.background.empty())
    s.warnings.push_back(latency_model_path(lo, *from) +
                         ": latency.queue_wait: fitted from runs, and used beside a background load that makes waits "
                         "of its own: the contention the measured runs met is counted twice unless they ran on an "
                         "idle partition (set cluster.latency.queue_wait beside \"from\" to override)");
  parse_latency_fields(lo, s);
  lo.finish();
}

void parse_autoscaler(Obj& co, ControlConfig& cc) {
  const Json* a = co.get("autoscaler");
  if (!a) return;
  auto& as = cc.autoscaler;
  Obj ao(*a, co.at("autoscaler"), co.file());
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

void parse_introspection(Obj& co, ControlConfig& cc) {
  const Json* in = co.get("introspection");
  if (!in) return;
  Obj io(*in, co.at("introspection"), co.file());
  if (io.has("check_after"))
    io.fail(io.at("check_after"), "the resource check now awaits the introspection task, as build() does: set "
                                  "env_build (its pending time) and duration instead of check_after");
  cc.introspection_env_build = io.duration("env_build", cc.introspection_env_build);
  cc.introspection_duration = io.duration("duration", cc.introspection_duration);
  cc.introspection_request = ResourceSet{};
  // Ray lists a task of num_cpus=0 with no required resources at all.
  const double cpus = io.number("cpus", 0.0, 0, static_cast<double>(limits::kMaxCpus));
  if (cpus > 0) cc.introspection_request.set(kCPU, cpus);
  io.finish();
}

// AppBuilder.submit's build_and_run_application task (builder.py:828-865
// @fba5ffe).
void parse_submit_task(Obj& co, ControlConfig& cc) {
  const Json* st = co.get("submit");
  if (!st) return;
  Obj so(*st, co.at("submit"), co.file());
  cc.submit_worker_start = so.duration("worker_start", cc.submit_worker_start);
  cc.submit_duration = so.duration("duration", cc.submit_duration);
  so.finish();
}

}  // namespace

void parse_cluster(Obj& root, Scenario& s) {
  const Json* c = root.get("cluster");
  if (!c) {
    s.slurm.nodes.push_back(PartitionNodeType{});
    return;
  }
  ControlConfig& cc = s.control;
  Obj co(*c, root.at("cluster"), root.file());
  const std::string mode = co.string("mode", "slurm");
  if (mode != "slurm" && mode != "static")
    co.fail(co.at("mode"), "expected \"slurm\" or \"static\", got \"" + mode + "\"");
  cc.slurm_mode = mode == "slurm";
  s.cuda_context_mb = co.integer("cuda_context_mb", s.cuda_context_mb, 0, limits::kMaxCudaContextMb);
  parse_head(co, s);
  parse_worker_defaults(co, cc.autoscaler);
  parse_workers(co, s);
  parse_partition(co, s);
  parse_background(co, s);
  parse_latency_section(co, s);
  parse_autoscaler(co, cc);
  parse_introspection(co, cc);
  parse_submit_task(co, cc);
  co.finish();
}

void check_partition(Obj& root, const Json& doc, const Scenario& s) {
  const ControlConfig& cc = s.control;
  std::int64_t nodes = 0, warm_hosts = 0;
  for (std::size_t i = 0; i < s.slurm.nodes.size(); ++i) {
    const auto& t = s.slurm.nodes[i];
    nodes += t.count;
    if (nodes > limits::kMaxNodes)
      root.fail("$.cluster.partition[" + std::to_string(i) + "].count",
                "expected at most " + std::to_string(limits::kMaxNodes) + " partition nodes in all, got " +
                    std::to_string(nodes) + " up to this entry");
    if (node_type_fits(t, s.initial_worker_size)) warm_hosts += t.count;
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
}

}  // namespace scenario_parse
}  // namespace vramsim
