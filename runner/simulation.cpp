#include "runner/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <memory>
#include <sstream>

#include "engine/event_loop.hpp"
#include "engine/format.hpp"
#include "engine/output_file.hpp"
#include "models/status.hpp"
#include "analysis/chrome_trace.hpp"
#include "runner/run_outputs.hpp"
#include "runner/scenario_driver.hpp"

namespace vramsim {

bool RunResult::all_held() const {
  return std::all_of(expectations.begin(), expectations.end(), [](const auto& e) { return e.held; });
}

namespace {

// The placement policy behind the engine's chooser, with the workload's
// typical tasks (what fgd measures fragmentation against).
class PolicyChooser final : public PlacementChooser {
 public:
  PolicyChooser(std::shared_ptr<const PlacementPolicy> p, std::vector<TaskShape> typical)
      : policy_(std::move(p)), typical_(std::move(typical)) {}
  std::size_t choose(const ResourceSet& request, const std::vector<PlacementOption>& options) const override {
    return policy_->choose(request, options, typical_);
  }

 private:
  std::shared_ptr<const PlacementPolicy> policy_;
  std::vector<TaskShape> typical_;
};

struct World {
  World(const Scenario& sc, std::uint64_t seed, PolicySet policies)
      : rng(seed),
        backend(loop, rng, trace, sc.slurm, policies.advertisement),
        control(loop, backend, cluster, trace, rng, std::move(policies), sc.control) {}
  EventLoop loop;
  RandomStreams rng;
  TraceRecorder trace;
  ClusterState cluster;
  SimSlurmBackend backend;
  ControlPlane control;
};

}  // namespace

std::vector<TaskShape> scenario_tasks(const Scenario& sc) {
  std::int64_t min_vram = 0;
  for (const auto& t : sc.slurm.nodes)
    if (t.gpus > 0 && t.gpu_memory_mb > 0) min_vram = min_vram ? std::min(min_vram, t.gpu_memory_mb) : t.gpu_memory_mb;
  std::vector<TaskShape> tasks;
  for (const auto& a : sc.apps) {
    Amount gpus = 0;
    if (a.disable_gpu) gpus = 0;
    else if (a.num_gpus) gpus = to_amount(*a.num_gpus);
    else if (!a.gpu_memory_mb || *a.gpu_memory_mb == 0) gpus = 0;
    else if (a.gpu_milli) gpus = *a.gpu_milli * (kAmountScale / 1000);
    else if (*a.gpu_memory_mb < 0) gpus = kAmountScale;
    else if (min_vram > 0)
      gpus = std::min(kAmountScale, to_amount(static_cast<double>(*a.gpu_memory_mb) / static_cast<double>(min_vram)));
    // The app's accelerator constraint (an openb pod's gpu_spec; a pod has
    // at most one) names the GPU models the task may run on.
    std::vector<std::string> models;
    for (const auto& r : a.resources)
      if (models.empty()) models = accelerator_models(r.first);
    tasks.push_back(TaskShape{to_amount(a.cpus), gpus, static_cast<double>(std::max(1, a.replicas)), std::move(models)});
  }
  return tasks;
}

void add_head_node(ClusterState& cluster, TraceRecorder& trace, const Scenario& sc) {
  NodeSpec head;
  head.ip = sc.head.ip;
  head.head = true;
  head.resources.set(kCPU, sc.head.cpus);
  if (sc.head.memory_gb > 0) head.resources.set(kMemory, static_cast<double>(sc.head.memory_gb) * kGiB);
  if (sc.head.gpus > 0) {
    const auto& info = gpu_catalogue().at(sc.head.gpu);
    NodeGpuFacts facts;
    facts.gpus = sc.head.gpus;
    facts.mig_enabled = sc.head.mig_enabled;
    facts.memory_total_mb.assign(static_cast<std::size_t>(sc.head.gpus), info.memory_mb);
    for (int g = 0; g < sc.head.gpus; ++g)
      head.devices.push_back(GpuDevice{g, info.device_name, info.memory_mb, 0, 0, std::nullopt, 0});
    head.accelerator_type = info.accelerator_type;
    if (auto v = head_vram_mb(facts)) head.resources.set(kVramMB, static_cast<double>(*v));
  }
  const Json resources = head.resources.to_json();
  NodeId id = cluster.add_node(std::move(head), 0);
  trace.record(0, "node_registered", {{"node", id}, {"job", ""}, {"ip", sc.head.ip}, {"resources", resources}});
}

namespace {

// The jobs' figures in the summary: GPU-hours by model, how the jobs ended,
// and what ran on past the shutdown.
void add_job_metrics(const SimSlurmBackend& backend, PartitionScheduling scheduling, SimTime end,
                     std::optional<SimTime> shutdown_at, RunMetrics& m) {
  const bool exclusive = scheduling == PartitionScheduling::Exclusive;
  double gpu_hours = 0;
  for (const SimJob& j : backend.jobs()) {
    // A job holds its GPUs from its start; in the exclusive partition it
    // holds every GPU of its node.
    if (const PartitionNodeType* t = backend.host_type(j); t && j.started && t->gpus > 0) {
      const double gpus = exclusive ? t->gpus : j.size.gpus;
      const double h = gpus * to_seconds(j.ended.value_or(end) - *j.started) / 3600;
      if (h > 0) m.gpu_hours_by_model[t->gpu_name] += h;
      gpu_hours += h;
    }
    if (j.life.state() == JobState::Cancelled) ++m.jobs_cancelled;
    if (j.life.state() == JobState::Timeout) ++m.jobs_timeout;
    if (!j.started) ++m.jobs_never_started;
    if (!shutdown_at && !is_terminal(j.life.state())) ++m.jobs_left;
    if (shutdown_at && j.started) {
      const SimTime from = std::max(*j.started, *shutdown_at);
      const SimTime to = j.ended.value_or(end);
      if (to > from) m.orphaned_job_seconds += to_seconds(to - from);
    }
  }
  // The exclusive partition bills whole nodes (the job events carry only
  // what the job asked for).
  if (exclusive) m.gpu_hours_allocated = gpu_hours;
}

// The background load's figures: its jobs and the share of the partition it held.
void add_background_metrics(const Scenario& sc, const SimSlurmBackend& backend, SimTime end, RunMetrics& m) {
  const BackgroundStats b = backend.background_stats(end);
  m.background_jobs = b.jobs;
  m.background_skipped = sc.background_skipped;
  m.background_started = b.started;
  m.background_never_started = b.jobs > b.started ? b.jobs - b.started : 0;
  m.background_wait_mean_s = b.started ? b.wait_s / static_cast<double>(b.started) : 0;
  m.background_skipped_gpus = sc.background_skipped_gpus;
  double cores = 0, gpus = 0;
  for (const auto& t : sc.slurm.nodes) {
    cores += static_cast<double>(t.cpus) * t.count;
    gpus += static_cast<double>(t.gpus) * t.count;
  }
  m.background_core_share = end > 0 && cores > 0 ? b.busy_cpu_s / (cores * to_seconds(end)) : 0;
  m.background_gpu_share = end > 0 && gpus > 0 ? b.held_gpu_s / (gpus * to_seconds(end)) : 0;
}

}  // namespace

namespace {

// Worker jobs the time limit ended while they held RUNNING serving replicas,
// and what went with them (RunMetrics::jobs_timeout_serving).
void add_time_limit_metrics(const SimSlurmBackend& backend, const std::map<std::string, ServeLosses>& losses,
                            RunMetrics& m) {
  double jobs = 0, replicas = 0, requests = 0;
  for (const SimJob& j : backend.jobs()) {
    if (j.life.state() != JobState::Timeout) continue;
    auto it = losses.find(j.id);
    if (it == losses.end()) continue;
    ++jobs;
    replicas += static_cast<double>(it->second.replicas);
    requests += static_cast<double>(it->second.requests);
  }
  m.jobs_timeout_serving = jobs;
  m.replicas_lost_time_limit = replicas;
  m.req_failed_time_limit = requests;
}

// The arrivals a run will likely see, for the request records' room: each
// traffic's max_requests or trace length, else its peak rate over the
// horizon; at most 2^22 (about 160 MB of address space, touched only as
// records land; past it the columns grow by doubling).
std::size_t expected_arrivals(const Scenario& sc) {
  constexpr double kCap = 4194304;
  double total = 0;
  for (const auto& [app, t] : sc.traffic) {
    double n = t.process == TrafficSpec::Process::Trace ? static_cast<double>(t.requests.size())
                                                        : t.peak_rate() * to_seconds(sc.horizon);
    if (t.max_requests) n = std::min(n, static_cast<double>(*t.max_requests));
    total += std::min(n, kCap);
  }
  return static_cast<std::size_t>(std::min(total, kCap));
}

}  // namespace

RunResult run_scenario(const Scenario& sc, const RunOptions& opt) {
  const std::uint64_t seed = opt.seed.value_or(sc.seed);
  PolicySet policies = parse_policy_spec(opt.policies.value_or(sc.policies));
  RunResult result;
  result.scenario = sc.name.empty() ? sc.file : sc.name;
  result.seed = seed;
  result.policies = policies.label;
  result.workload = sc.workload_summary;
  Json policy_names = Json::object();
  for (const auto& [m, v] : policies.names) policy_names[m] = v;

  std::shared_ptr<const PlacementChooser> chooser;
  const std::vector<TaskShape> tasks = scenario_tasks(sc);
  const std::vector<TaskShape> typical = typical_tasks(tasks, kTypicalPopularity);
  const auto placement_name = policies.names.find(PlacementPolicy::kModel);
  const std::string placement = placement_name == policies.names.end() ? "ray" : placement_name->second;
  if (placement_name != policies.names.end()) chooser = std::make_shared<PolicyChooser>(policies.placement, typical);
  World w(sc, seed, std::move(policies));
  w.cluster.set_placement_chooser(chooser);
  ScenarioDriver driver(sc, RunView{w.loop, w.cluster, w.backend, w.control, w.trace}, result);
  driver.attach();
  if (!opt.trace_path.empty()) w.trace.add_sink(std::make_shared<JsonLinesSink>(opt.trace_path));
  if (opt.trace_stream) w.trace.add_sink(std::make_shared<JsonLinesSink>(*opt.trace_stream));
  const bool requests = opt.keep_requests || !opt.requests_csv_path.empty();
  if (requests) w.control.keep_request_records(expected_arrivals(sc));
  Json started = {{"scenario", result.scenario}, {"seed", seed}, {"policies", policy_names}};
  // A run whose partition also held a background load: its queue waits
  // hold that contention (what `vramsim calibrate` must not fit again).
  if (!sc.slurm.background.empty()) started["background_jobs"] = sc.slurm.background.size();
  w.trace.record(0, "run_started", started);

  add_head_node(w.cluster, w.trace, sc);
  for (int i = 0; i < sc.initial_workers; ++i) {
    w.backend.start_warm_worker(sc.initial_worker_size);
  }
  for (const auto& z : sc.warm_workers) w.backend.start_warm_worker(z);
  if (!opt.status_at.empty() || opt.status_every) driver.keep_status();
  w.control.start();
  driver.schedule(opt.status_at, opt.status_every, opt.status_csv_path);
  if (!opt.serve_timeline_path.empty()) driver.schedule_serve_timeline(opt.serve_timeline_path, opt.serve_window);
  if (!opt.frag_csv_path.empty())
    driver.schedule_fragmentation(opt.frag_csv_path, opt.frag_nodes_csv_path, placement, tasks, typical);

  w.loop.run(sc.horizon);
  const SimTime end = w.loop.now();
  driver.finish(end, w.loop.events_run(), Json::object(), [&](RunMetrics& m) {
    add_job_metrics(w.backend, sc.slurm.scheduling, end, w.control.shutdown_done_at(), m);
    if (!sc.traffic.empty()) add_time_limit_metrics(w.backend, w.control.serving_losses_by_job(), m);
    if (!sc.slurm.background.empty()) add_background_metrics(sc, w.backend, end, m);
  });
  if (opt.critical_path) {
    std::vector<std::string> ids;
    for (const auto& a : result.apps) ids.push_back(a.id);
    for (auto& p : critical_paths(driver.events(), ids))
      if (p) result.critical_paths.push_back(std::move(*p));
  }
  if (!opt.status_json_path.empty()) driver.write_status_json(opt.status_json_path);
  if (opt.keep_status_snapshots) result.status_snapshots = driver.status_snapshots();
  if (!opt.chrome_trace_path.empty()) write_chrome_trace(driver.events(), opt.chrome_trace_path);
  if (requests) result.requests = w.control.take_request_records();
  if (!opt.requests_csv_path.empty()) write_requests_csv(result.requests, opt.requests_csv_path);
  return result;
}

namespace {
// Unallocatable GPUs: three significant digits (one decimal from 100 on),
// so a fraction of a GPU never prints as 0 beside its non-zero share.
std::string gpus_figure(double v) {
  if (v == 0 || !std::isfinite(v)) return format_number(v);
  if (std::fabs(v) >= 100) return format_number(std::round(v * 10) / 10);
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(std::fabs(v))));
  return format_number(std::round(v * scale) / scale);
}
}  // namespace

std::string time_limit_note(const RunMetrics& m) {
  auto count = [](std::optional<double> v) { return format_number(v.value_or(0)); };
  return "time limit: " + count(m.jobs_timeout_serving) +
         " worker job(s) reached their time_limit while serving; " + count(m.replicas_lost_time_limit) +
         " replica(s) lost with their nodes (a replacement is a cold start) and " + count(m.req_failed_time_limit) +
         " request(s) lost with them (a longer cluster.worker_defaults.time_limit trades these for longer jobs: "
         "docs/serving.md, \"Worker time limits\")";
}

void print_summary(const RunResult& r, std::ostream& out) {
  out << "scenario " << r.scenario << "  policies " << r.policies << "  seed " << r.seed << "\n\n";
  // The app column fits the longest id (an imported application.deployment).
  int app_w = 18;
  for (const auto& a : r.apps) app_w = std::max(app_w, static_cast<int>(a.id.size()) + 2);
  out << std::left << std::setw(app_w) << "app" << std::setw(10) << "admitted" << std::setw(15) << "state"
      << std::setw(12) << "to RUNNING" << "reservation\n";
  for (const auto& a : r.apps) {
    out << std::left << std::setw(app_w) << a.id << std::setw(10) << a.admitted << std::setw(15) << a.final_state
        << std::setw(12) << (a.time_to_running ? format_seconds(*a.time_to_running) + "s" : "-") << a.reservation
        << "\n";
    if (!a.message.empty()) out << "    " << a.message << "\n";
  }
  const auto& m = r.metrics;
  out << "\njobs submitted " << m.jobs_submitted << ", cancelled " << m.jobs_cancelled << ", timed out "
      << m.jobs_timeout << "; scale-ups " << m.scale_ups << ", scale-downs " << m.scale_downs << "\n";
  if (m.jobs_timeout_serving && *m.jobs_timeout_serving > 0) out << time_limit_note(m) << "\n";
  if (m.shut_down)
    out << "after shutdown: " << m.jobs_left << " job(s) left behind, orphaned allocation "
        << format_number(std::round(m.orphaned_job_seconds)) << " job-s\n";
  else
    out << "no shutdown: " << m.jobs_left << " job(s) still queued or running at " << format_seconds(m.end_time)
        << " s\n";
  if (!r.workload.empty()) out << r.workload << "\n";
  if (m.background_jobs > 0) {
    out << "background: " << m.background_jobs << " trace job(s) (" << m.background_skipped << " left out";
    if (m.background_skipped_gpus > 0)
      out << ", " << m.background_skipped_gpus << " of them for more GPUs per node than any node has";
    out << "), " << m.background_started << " started, mean wait "
        << format_number(std::round(m.background_wait_mean_s)) << " s, "
        << format_number(std::round(m.background_core_share * 1000) / 10) << "% of the partition's cores busy, "
        << format_number(std::round(m.background_gpu_share * 1000) / 10) << "% of its GPUs held\n";
  }
  if (m.utilisation_samples > 0)
    out << "GPU use (mean of " << m.utilisation_samples << " samples): allocated "
        << format_number(std::round(m.gpu_allocation * 1000) / 10) << "%, VRAM booked "
        << format_number(std::round(m.sampled_vram_utilisation * 1000) / 10) << "%, fragmentation "
        << gpus_figure(m.gpu_fragmentation) << " GPUs ("
        << format_number(std::round(m.gpu_fragmentation_share * 1000) / 10) << "% of the GPUs)\n";
  if (m.sbatch_refusals > 0)
    out << "sbatch refused " << m.sbatch_refusals << " submission(s): " << m.sbatch_error << "\n";
  for (const auto& u : r.unplaced) out << "unplaced " << u.label << " " << u.request.dump() << ": " << u.reason << "\n";
  if (!r.unplaced.empty() || m.sbatch_refusals > 0)
    out << "idle allocation held meanwhile: " << format_number(std::round(m.idle_node_seconds))
        << " node-s of registered workers with nothing placed\n";
  print_serve_table(r.serving, out);
  // With serving, what the capacity cost (kept out of other summaries).
  if (!r.serving.empty() && !r.metrics.gpu_hours_by_model.empty()) {
    out << "GPU-hours held:";
    for (const auto& [model, h] : r.metrics.gpu_hours_by_model)
      out << " " << model << " " << format_number(std::round(h * 100) / 100);
    if (r.metrics.cost_usd) out << "; cost $" << format_number(std::round(*r.metrics.cost_usd * 100) / 100);
    else {
      out << "; cost unknown: no price for";
      for (const auto& u : r.metrics.unpriced) out << " " << u;
      out << " (set gpu_prices_usd_per_hour)";
    }
    out << "\n";
  }
  if (!r.status_lines.empty()) {
    out << "\n";
    for (const auto& l : r.status_lines) out << l << "\n";
  }
  for (const auto& p : r.critical_paths) {
    out << "\n";
    print_critical_path(p, out);
  }
  if (!r.expectations.empty()) {
    out << "\nexpectations:\n";
    for (const auto& e : r.expectations)
      out << "  " << (e.held ? "held  " : "FAILED") << " " << e.path
          << (e.name.empty() ? "" : " [" + e.name + "]") << " " << e.description << (e.held ? "" : ": " + e.why)
          << "\n";
  }
}

void print_comparison(const std::vector<RunResult>& runs, std::ostream& out,
                      const std::vector<std::size_t>& required) {
  if (runs.empty()) return;
  const int w0 = 42, w = 28;
  out << "scenario " << runs.front().scenario << "  seed " << runs.front().seed << "\n\n";
  out << std::left << std::setw(w0) << "";
  for (const auto& r : runs) out << std::setw(w) << r.policies;
  out << "\n";
  auto row = [&](const std::string& label, auto fn) {
    out << std::left << std::setw(w0) << label;
    for (const auto& r : runs) out << std::setw(w) << fn(r);
    out << "\n";
  };
  for (std::size_t i = 0; i < runs.front().apps.size(); ++i) {
    const std::string id = runs.front().apps[i].id;
    auto get = [&](const RunResult& r) -> const AppOutcome* {
      for (const auto& a : r.apps) if (a.id == id) return &a;
      return nullptr;
    };
    row(id + ": admitted", [&](const RunResult& r) { auto a = get(r); return a ? a->admitted : "-"; });
    row(id + ": time to RUNNING", [&](const RunResult& r) {
      auto a = get(r);
      return a && a->time_to_running ? format_seconds(*a->time_to_running) + "s" : std::string("never");
    });
    row(id + ": reservation", [&](const RunResult& r) { auto a = get(r); return a ? a->reservation : "-"; });
    row(id + ": final state", [&](const RunResult& r) { auto a = get(r); return a ? a->final_state : "-"; });
  }
  row("jobs submitted", [](const RunResult& r) { return std::to_string(r.metrics.jobs_submitted); });
  row("jobs cancelled", [](const RunResult& r) { return std::to_string(r.metrics.jobs_cancelled); });
  row("jobs left (after shutdown, else at end)", [](const RunResult& r) { return std::to_string(r.metrics.jobs_left); });
  row("orphaned allocation (job-s)", [](const RunResult& r) { return format_number(std::round(r.metrics.orphaned_job_seconds)); });
  row("expectations held", [](const RunResult& r) {
    long held = std::count_if(r.expectations.begin(), r.expectations.end(), [](const auto& e) { return e.held; });
    return std::to_string(held) + "/" + std::to_string(r.expectations.size());
  });
  for (std::size_t i : required) {
    const RunResult& r = runs.at(i);
    for (const auto& e : r.expectations)
      if (!e.held)
        out << "FAILED (" << r.policies << ") " << e.path << (e.name.empty() ? "" : " [" + e.name + "]") << " "
            << e.description << ": " << e.why << "\n";
  }
}

}  // namespace vramsim
