#include "runner/simulation.hpp"

#include <algorithm>
#include <memory>

#include "backends/sim/sim_slurm_backend.hpp"
#include "engine/event_loop.hpp"
#include "models/placement.hpp"
#include "runner/scenario_driver.hpp"
#include "scenario/task_shapes.hpp"

namespace vramsim {
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

// The simulated world's own account of its jobs (the `account` stage): how
// each ended and what ran past the shutdown, GPU-hours by model, the
// background load, and serving replicas lost to time limits.
class SimWorldAccount final : public RunObserver {
 public:
  explicit SimWorldAccount(const SimSlurmBackend& backend) : backend_(backend) {}
  void account(RunResult& result) override {
    const Scenario& sc = ctx().scenario;
    RunMetrics& m = result.metrics;
    add_job_metrics(backend_, sc.slurm.scheduling, m.end_time, ctx().control.shutdown_done_at(), m);
    if (!sc.traffic.empty()) add_time_limit_metrics(backend_, ctx().control.serving_losses_by_job(), m);
    if (!sc.slurm.background.empty()) add_background_metrics(sc, backend_, m.end_time, m);
  }

 private:
  const SimSlurmBackend& backend_;
};

}  // namespace

RunResult run_scenario(const Scenario& sc, const RunOptions& opt) {
  const std::uint64_t seed = opt.seed.value_or(sc.seed);
  PolicySet policies = parse_policy_spec(opt.policies.value_or(sc.policies));
  RunResult result;
  result.scenario = sc.name.empty() ? sc.file : sc.name;
  result.seed = seed;
  result.policies = policies.label;
  result.workload = sc.workload_summary;
  RunObservers observers = make_run_observers(sc, policies, opt.outputs);

  std::shared_ptr<const PlacementChooser> chooser;
  if (policies.names.count(PlacementPolicy::kModel))
    chooser = std::make_shared<PolicyChooser>(policies.placement,
                                              typical_tasks(scenario_tasks(sc), kTypicalPopularity));
  EventLoop loop;
  RandomStreams rng(seed);
  TraceRecorder trace;
  ClusterState cluster;
  SimSlurmBackend backend(loop, rng, trace, sc.slurm, policies.advertisement);
  ControlPlane control(loop, backend, cluster, trace, rng, std::move(policies), sc.control);
  cluster.set_placement_chooser(chooser);
  observers.push_back(std::make_unique<SimWorldAccount>(backend));
  ScenarioDriver driver(sc, RunWorld{loop, cluster, backend, control, trace}, result, std::move(observers));

  // A run whose partition also held a background load: its queue waits
  // hold that contention (what `vramsim calibrate` must not fit again).
  Json extra = Json::object();
  if (!sc.slurm.background.empty()) extra["background_jobs"] = sc.slurm.background.size();
  driver.record_run_started(extra);
  driver.start([&] {
    for (int i = 0; i < sc.initial_workers; ++i) backend.start_warm_worker(sc.initial_worker_size);
    for (const auto& z : sc.warm_workers) backend.start_warm_worker(z);
  });
  loop.run(sc.horizon);
  driver.finish(loop.now(), loop.events_run(), Json::object());
  return result;
}

}  // namespace vramsim
