#pragma once
// What a run measures, declared once. RunMetrics holds one run's figures;
// kRunMetrics lists every metric a sweep CSV, `run --summary-json`, Python's
// `summary`, an `expect` metric and a plan's `--slo` name, in column order,
// each with its unit, its meaning (docs/sweeps.md holds the same words:
// tests compare them) and the observer that computes it. The observers
// (observers/) fill RunMetrics as the run goes and when it ends.
//
// To add a metric: a field below, one row in kRunMetrics (run_metrics.cpp),
// its computation in the observer the row names, and its row in
// docs/sweeps.md.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/time.hpp"

namespace vramsim {

struct RunMetrics {
  int jobs_submitted = 0, jobs_cancelled = 0, jobs_timeout = 0, jobs_left = 0;
  int jobs_never_started = 0;   // ended or left without ever running (cancelled while queued, ...)
  double orphaned_job_seconds = 0;   // allocation held by jobs after shutdown
  int scale_ups = 0, scale_downs = 0, device_overbookings = 0;
  int sbatch_refusals = 0;           // worker jobs sbatch refused (job_rejected)
  std::string sbatch_error;          // the first refusal's message
  std::size_t pending_forever = 0;   // demands no node that joined could ever hold
  double idle_node_seconds = 0;      // registered workers with nothing placed, summed
  SimTime end_time = 0;
  bool shut_down = false;            // jobs_left counts after shutdown, else at the end
  std::uint64_t events = 0;
  // Background load (cluster.background): trace jobs in the run, left out,
  // started, their mean wait, and the partition's cores they kept busy and
  // GPUs they held.
  std::size_t background_jobs = 0, background_skipped = 0, background_started = 0;
  std::size_t background_never_started = 0;  // in the run, still queued at its end
  std::size_t background_skipped_gpus = 0;   // of the skipped, too many GPUs per node (summary only)
  double background_wait_mean_s = 0, background_core_share = 0, background_gpu_share = 0;
  // Capacity figures (docs/sweeps.md); nullopt where there is nothing to measure.
  std::optional<double> ttr_p50_s, ttr_p95_s, ttr_p99_s;  // time to RUNNING over apps that got there
  int rejected_deployments = 0;       // admission decisions that refused a deploy
  int apps_deployed = 0, apps_running = 0;  // apps in the run, and those that reached RUNNING
  double gpu_hours_allocated = 0;     // worker jobs' GPUs x time RUNNING
  double gpu_hours_booked = 0;        // GPUs booked by replicas x time placed
  std::optional<double> gpu_hours_observed;  // devices seen holding memory x time (live only)
  std::optional<double> vram_utilisation;    // booked / advertised VRAM_MB-seconds
  std::optional<double> queue_wait_mean_s, queue_wait_p95_s;  // worker jobs, submit -> RUNNING
  // Serving (docs/serving.md): every serving app's requests pooled; nullopt
  // in a run without one. Percentiles are +inf where the rank falls on a
  // request that never completed.
  std::optional<double> req_completed, req_refused, req_timed_out, req_cold, req_failed, req_unfinished;
  std::optional<double> req_wait_mean_s, req_latency_mean_s, req_latency_p50_s, req_latency_p95_s, req_latency_p99_s;
  std::optional<double> req_slo_attainment, replica_seconds;
  // Worker jobs that hit their SLURM time limit while holding a RUNNING
  // serving replica, the serving replicas lost with their nodes (each one
  // the app starts again from cold) and the requests those replicas held.
  // nullopt in a run without a serving app.
  std::optional<double> jobs_timeout_serving, replicas_lost_time_limit, req_failed_time_limit;
  // GPU-hours the worker jobs held, by GPU model (a job of the exclusive
  // partition holds every GPU of its node), and their cost at the price
  // table; cost is nullopt when a model has no price (listed in unpriced).
  std::map<std::string, double> gpu_hours_by_model;
  std::optional<double> cost_usd;
  std::vector<std::string> unpriced;
  // GPU use, averaged over Scenario::utilisation_samples evenly spaced
  // samples (a workload's scenarios take them; else all 0).
  std::size_t utilisation_samples = 0;
  double gpu_fragmentation = 0;        // unallocatable GPUs (FGD), analysis/fragmentation.hpp
  double gpu_fragmentation_share = 0;  // the same over the cluster's GPUs
  double gpu_allocation = 0;           // share of GPU capacity booked
  double sampled_vram_utilisation = 0; // VRAM booked / VRAM total

  // Every metric of kRunMetrics by name, in its order; nullopt: not
  // measured in this run.
  template <class F>
  void for_each(F&& f) const;
};

// One metric: its name (a CSV column, a summary key), its unit ("" for a
// count of events), what it means, which observer computes it, and its value
// in a run (nullopt: not measured there).
struct RunMetricSpec {
  std::string_view name, unit, meaning, computed_by;
  std::optional<double> (*value)(const RunMetrics&);
  // A share of something, from 0 to 1 (its unit is "ratio" or "0/1").
  bool is_share() const { return unit == "ratio" || unit == "0/1"; }
};

// Every metric, in the sweep CSV's column order.
std::span<const RunMetricSpec> run_metrics();
// The metric of that name; nullptr for none.
const RunMetricSpec* find_run_metric(std::string_view name);

template <class F>
void RunMetrics::for_each(F&& f) const {
  for (const RunMetricSpec& m : run_metrics()) f(m.name, m.value(*this));
}

}  // namespace vramsim
