#include "scenario/run_metrics.hpp"

#include <array>

namespace vramsim {
namespace {

using V = std::optional<double>;
constexpr std::string_view kJobs = "observers/job_accounting.cpp";
constexpr std::string_view kWorld = "the world's account: runner/simulation.cpp (SimWorldAccount), live/live_head.cpp (LiveWorldAccount)";
constexpr std::string_view kUsage = "observers/usage_integrals.cpp";
constexpr std::string_view kDriver = "runner/scenario_driver.cpp";
constexpr std::string_view kApps = "observers/app_outcomes.cpp";
constexpr std::string_view kServing = "observers/serving_outcomes.cpp";
constexpr std::string_view kTimeLimit = "runner/simulation.cpp (SimWorldAccount)";
constexpr std::string_view kCost = "observers/cost.cpp";
constexpr std::string_view kSamples = "observers/utilisation_samples.cpp";
constexpr std::string_view kUnplaced = "observers/unplaced_demands.cpp";
constexpr std::string_view kBackground = "runner/simulation.cpp (SimWorldAccount)";

// Sampled means exist with a workload's utilisation samples, background
// figures with a background load.
V sampled(const RunMetrics& m, double v) { return m.utilisation_samples > 0 ? V(v) : std::nullopt; }
V background(const RunMetrics& m, double v) { return m.background_jobs > 0 ? V(v) : std::nullopt; }

const std::array kTable = {
    RunMetricSpec{"jobs_submitted", "jobs", "worker jobs sbatch accepted (workers up at t=0 not counted)", kJobs,
                  [](const RunMetrics& m) -> V { return m.jobs_submitted; }},
    RunMetricSpec{"jobs_cancelled", "jobs", "worker jobs that ended CANCELLED", kWorld,
                  [](const RunMetrics& m) -> V { return m.jobs_cancelled; }},
    RunMetricSpec{"jobs_timeout", "jobs", "worker jobs that ended TIMEOUT (their time limit)", kWorld,
                  [](const RunMetrics& m) -> V { return m.jobs_timeout; }},
    RunMetricSpec{"jobs_left", "jobs", "jobs still queued or running after shutdown, else at the end", kWorld,
                  [](const RunMetrics& m) -> V { return m.jobs_left; }},
    RunMetricSpec{"jobs_never_started", "jobs",
                  "worker jobs that never ran: cancelled while queued, or still queued at the end", kWorld,
                  [](const RunMetrics& m) -> V { return m.jobs_never_started; }},
    RunMetricSpec{"orphaned_job_seconds", "job-s", "allocation held by jobs after shutdown", kWorld,
                  [](const RunMetrics& m) -> V { return m.orphaned_job_seconds; }},
    RunMetricSpec{"scale_ups", "", "autoscaler decisions to submit a worker job", kJobs,
                  [](const RunMetrics& m) -> V { return m.scale_ups; }},
    RunMetricSpec{"scale_downs", "", "autoscaler decisions to stop an idle worker", kJobs,
                  [](const RunMetrics& m) -> V { return m.scale_downs; }},
    RunMetricSpec{"device_overbookings", "", "`device_vram_overbooked` events", kJobs,
                  [](const RunMetrics& m) -> V { return m.device_overbookings; }},
    RunMetricSpec{"sbatch_refusals", "", "worker jobs sbatch refused", kJobs,
                  [](const RunMetrics& m) -> V { return m.sbatch_refusals; }},
    RunMetricSpec{"pending_forever", "", "demands no node that joined could ever hold", kUnplaced,
                  [](const RunMetrics& m) -> V { return static_cast<double>(m.pending_forever); }},
    RunMetricSpec{"idle_node_seconds", "node-s", "registered workers with nothing placed", kUsage,
                  [](const RunMetrics& m) -> V { return m.idle_node_seconds; }},
    RunMetricSpec{"end_time_s", "s", "when the run ended", kDriver,
                  [](const RunMetrics& m) -> V { return to_seconds(m.end_time); }},
    RunMetricSpec{"shut_down", "0/1", "whether a shutdown completed", kDriver,
                  [](const RunMetrics& m) -> V { return m.shut_down ? 1 : 0; }},
    RunMetricSpec{"events", "", "kernel events executed", kDriver,
                  [](const RunMetrics& m) -> V { return static_cast<double>(m.events); }},
    RunMetricSpec{"ttr_p50_s", "s",
                  "time to RUNNING (first deploy request to first RUNNING) over the apps that reached RUNNING, "
                  "nearest-rank median; empty when none did",
                  kApps, [](const RunMetrics& m) -> V { return m.ttr_p50_s; }},
    RunMetricSpec{"ttr_p95_s", "s", "the same, nearest-rank 95th percentile", kApps,
                  [](const RunMetrics& m) -> V { return m.ttr_p95_s; }},
    RunMetricSpec{"ttr_p99_s", "s", "the same, nearest-rank 99th percentile", kApps,
                  [](const RunMetrics& m) -> V { return m.ttr_p99_s; }},
    RunMetricSpec{"rejected_deployments", "", "admission decisions that refused a deploy", kJobs,
                  [](const RunMetrics& m) -> V { return m.rejected_deployments; }},
    RunMetricSpec{"apps", "", "apps of the run", kApps,
                  [](const RunMetrics& m) -> V { return m.apps_deployed; }},
    RunMetricSpec{"apps_reached_running", "", "apps that reached RUNNING at least once", kApps,
                  [](const RunMetrics& m) -> V { return m.apps_running; }},
    RunMetricSpec{"gpu_hours_allocated", "GPU-h",
                  "each worker job's GPUs x its time RUNNING (`job_started` to `job_ended`, or to the end of the "
                  "run); in the `exclusive` partition a job holds every GPU of its node",
                  "observers/job_accounting.cpp; in the exclusive partition runner/simulation.cpp (SimWorldAccount)",
                  [](const RunMetrics& m) -> V { return m.gpu_hours_allocated; }},
    RunMetricSpec{"gpu_hours_booked", "GPU-h",
                  "GPUs booked by replicas (node GPU totals minus available, fractions included, head included) "
                  "integrated over time",
                  kUsage, [](const RunMetrics& m) -> V { return m.gpu_hours_booked; }},
    RunMetricSpec{"gpu_hours_observed", "GPU-h",
                  "devices whose driver-observed memory in use was above zero, integrated over time; only where the "
                  "backend measures device memory (live agents), empty in simulation",
                  kUsage, [](const RunMetrics& m) -> V { return m.gpu_hours_observed; }},
    RunMetricSpec{"vram_utilisation", "ratio",
                  "VRAM_MB booked / VRAM_MB advertised, each integrated over time over the alive nodes; empty when "
                  "no node advertised VRAM_MB (legacy advertisement)",
                  kUsage, [](const RunMetrics& m) -> V { return m.vram_utilisation; }},
    RunMetricSpec{"queue_wait_mean_s", "s",
                  "worker jobs' `job_submitted` to `job_started`, mean; empty when no job started", kJobs,
                  [](const RunMetrics& m) -> V { return m.queue_wait_mean_s; }},
    RunMetricSpec{"queue_wait_p95_s", "s", "the same, nearest-rank 95th percentile", kJobs,
                  [](const RunMetrics& m) -> V { return m.queue_wait_p95_s; }},
    RunMetricSpec{"req_completed", "requests",
                  "serving apps' requests answered (`serving.md`), pooled; empty without a serving app", kServing,
                  [](const RunMetrics& m) -> V { return m.req_completed; }},
    RunMetricSpec{"req_refused", "requests",
                  "requests refused: past `max_queued_requests`, or the app failed or was deleted", kServing,
                  [](const RunMetrics& m) -> V { return m.req_refused; }},
    RunMetricSpec{"req_timed_out", "requests", "requests that timed out (`request_timeout_s`)", kServing,
                  [](const RunMetrics& m) -> V { return m.req_timed_out; }},
    RunMetricSpec{"req_cold", "requests", "requests that arrived while their app had no running replica", kServing,
                  [](const RunMetrics& m) -> V { return m.req_cold; }},
    RunMetricSpec{"req_failed", "requests", "requests lost with their node", kServing,
                  [](const RunMetrics& m) -> V { return m.req_failed; }},
    RunMetricSpec{"req_unfinished", "requests", "requests still waiting or in service at the end", kServing,
                  [](const RunMetrics& m) -> V { return m.req_unfinished; }},
    RunMetricSpec{"req_wait_mean_s", "s", "arrival to a replica taking it, over the requests a replica took",
                  kServing, [](const RunMetrics& m) -> V { return m.req_wait_mean_s; }},
    RunMetricSpec{"req_latency_mean_s", "s", "arrival to answer, mean over the answered requests", kServing,
                  [](const RunMetrics& m) -> V { return m.req_latency_mean_s; }},
    RunMetricSpec{"req_latency_p50_s", "s",
                  "arrival to answer, nearest rank over every request that arrived; a request that never completed "
                  "counts as infinite (`inf`), so a failure is never left out",
                  kServing, [](const RunMetrics& m) -> V { return m.req_latency_p50_s; }},
    RunMetricSpec{"req_latency_p95_s", "s", "the same, 95th percentile", kServing,
                  [](const RunMetrics& m) -> V { return m.req_latency_p95_s; }},
    RunMetricSpec{"req_latency_p99_s", "s", "the same, 99th percentile", kServing,
                  [](const RunMetrics& m) -> V { return m.req_latency_p99_s; }},
    RunMetricSpec{"req_slo_attainment", "ratio",
                  "requests answered within their app's `slo_latency_s` over the requests of the apps that set one",
                  kServing, [](const RunMetrics& m) -> V { return m.req_slo_attainment; }},
    RunMetricSpec{"replica_seconds", "replica-s", "RUNNING replicas of serving apps, integrated over time", kServing,
                  [](const RunMetrics& m) -> V { return m.replica_seconds; }},
    RunMetricSpec{"jobs_timeout_serving", "jobs",
                  "worker jobs that reached their `time_limit` (TIMEOUT) while holding a RUNNING serving replica "
                  "(`serving.md`, \"Worker time limits\"); empty without a serving app. `sweep` prints one line when "
                  "any run has such a job",
                  kTimeLimit, [](const RunMetrics& m) -> V { return m.jobs_timeout_serving; }},
    RunMetricSpec{"replicas_lost_time_limit", "replicas", "the serving replicas lost with those jobs' nodes",
                  kTimeLimit, [](const RunMetrics& m) -> V { return m.replicas_lost_time_limit; }},
    RunMetricSpec{"req_failed_time_limit", "requests", "the requests those replicas held", kTimeLimit,
                  [](const RunMetrics& m) -> V { return m.req_failed_time_limit; }},
    RunMetricSpec{"cost_usd", "USD",
                  "the worker jobs' GPU-hours by GPU model (as `gpu_hours_allocated` counts them) times the price "
                  "table (`gpu-models.md`, \"Prices\"; `gpu_prices_usd_per_hour` overrides); empty when a model has "
                  "no price or no job ran",
                  kCost, [](const RunMetrics& m) -> V { return m.cost_usd; }},
    RunMetricSpec{"gpu_allocation", "ratio",
                  "GPU capacity booked / GPUs, the mean over the workload's utilisation samples "
                  "(`workloads-openb.md`); empty in a run that takes no samples (a scenario without a workload)",
                  kSamples, [](const RunMetrics& m) { return sampled(m, m.gpu_allocation); }},
    RunMetricSpec{"sampled_vram_utilisation", "ratio",
                  "VRAM booked / VRAM, the mean over the same samples; empty without samples", kSamples,
                  [](const RunMetrics& m) { return sampled(m, m.sampled_vram_utilisation); }},
    RunMetricSpec{"gpu_fragmentation", "GPUs",
                  "unallocatable GPUs as the FGD paper measures them, the mean over the same samples; empty without "
                  "samples",
                  kSamples, [](const RunMetrics& m) { return sampled(m, m.gpu_fragmentation); }},
    RunMetricSpec{"gpu_fragmentation_share", "ratio",
                  "the same over the cluster's GPUs (0.022 is 2.2 %); empty without samples", kSamples,
                  [](const RunMetrics& m) { return sampled(m, m.gpu_fragmentation_share); }},
    RunMetricSpec{"background_jobs", "",
                  "trace jobs of the background load in the run (`scenario-format.md`, `cluster.background`); empty "
                  "without a background load",
                  kBackground,
                  [](const RunMetrics& m) { return background(m, static_cast<double>(m.background_jobs)); }},
    RunMetricSpec{"background_skipped", "", "trace jobs of the background load left out", kBackground,
                  [](const RunMetrics& m) { return background(m, static_cast<double>(m.background_skipped)); }},
    RunMetricSpec{"background_started", "", "background jobs that started", kBackground,
                  [](const RunMetrics& m) { return background(m, static_cast<double>(m.background_started)); }},
    RunMetricSpec{"background_never_started", "", "background jobs still queued at the end", kBackground,
                  [](const RunMetrics& m) {
                    return background(m, static_cast<double>(m.background_never_started));
                  }},
    RunMetricSpec{"background_wait_mean_s", "s", "the started background jobs' mean wait", kBackground,
                  [](const RunMetrics& m) { return background(m, m.background_wait_mean_s); }},
    RunMetricSpec{"background_core_share", "ratio",
                  "the partition's cores the background jobs kept busy over the run", kBackground,
                  [](const RunMetrics& m) { return background(m, m.background_core_share); }},
    RunMetricSpec{"background_gpu_share", "ratio",
                  "GPU-seconds held by the background jobs over the partition's GPUs times the run's length (0 when "
                  "no job states GPUs)",
                  kBackground, [](const RunMetrics& m) { return background(m, m.background_gpu_share); }},
};

}  // namespace

std::span<const RunMetricSpec> run_metrics() { return kTable; }

const RunMetricSpec* find_run_metric(std::string_view name) {
  for (const RunMetricSpec& m : kTable)
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace vramsim
