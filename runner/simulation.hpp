#pragma once
// One run of a scenario in simulation: builds the world (event loop, cluster
// state, simulated SLURM partition, control plane with the chosen policies),
// replays the actions, then checks the expectations.
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/critical_path.hpp"
#include "models/fragmentation.hpp"
#include "runner/serve_metrics.hpp"
#include "scenario/scenario.hpp"

namespace vramsim {

struct RunOptions {
  std::optional<std::uint64_t> seed;       // overrides the scenario's
  std::optional<std::string> policies;     // overrides the scenario's
  std::string trace_path;                  // JSON Lines; empty: none
  std::vector<Duration> status_at;         // print status at these times
  std::optional<Duration> status_every;    // CSV timeline period
  std::string status_json_path;            // status snapshots (JSON array)
  std::string status_csv_path = "status-timeline.csv";  // timeline CSV, with status_every
  bool critical_path = false;              // explain each app's time to RUNNING
  std::string chrome_trace_path;           // Chrome Trace Event JSON; empty: none
  std::string serve_timeline_path;         // serving timeline CSV; empty: none
  Duration serve_window = 60 * kSecond;    // its window
  std::string frag_csv_path;               // one row per arrival (FGD's picture); empty: none
  std::string frag_nodes_csv_path;         // per GPU node at the end, with frag_csv_path; empty: none
  std::ostream* trace_stream = nullptr;    // the trace as JSON Lines here too (the same bytes as trace_path)
  bool keep_requests = false;              // every request's path in RunResult::requests
  std::string requests_csv_path;           // those records as CSV (runner/run_outputs.hpp); empty: none
  bool keep_status_snapshots = false;      // the status snapshots in RunResult::status_snapshots
};

struct ExpectationResult {
  std::string path;       // "$.expect[1]" or "$.actions[3].expect"
  std::string name;       // the expectation's "name", if given
  std::string description;
  bool held = false;
  std::string why;        // what was observed
};

struct AppOutcome {
  std::string id;
  std::string admitted;       // "admitted", "rejected", "pending" (never checked)
  std::string final_state;
  std::optional<Duration> time_to_running;  // from the first deploy request
  std::string reservation;    // "0.01 GPU + 8000 MB VRAM_MB", "1 GPU", "none"
  std::string message;
};

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

  // Every numeric metric by name, in a fixed order (sweep CSV columns);
  // nullopt: not measured in this run.
  void for_each(const std::function<void(const char* name, std::optional<double> value)>& f) const;
  // GPU use, averaged over Scenario::utilisation_samples evenly spaced
  // samples (a workload's scenarios take them; else all 0).
  std::size_t utilisation_samples = 0;
  double gpu_fragmentation = 0;        // unallocatable GPUs (FGD), runner/fragmentation.hpp
  double gpu_fragmentation_share = 0;  // the same over the cluster's GPUs
  double gpu_allocation = 0;           // share of GPU capacity booked
  double sampled_vram_utilisation = 0; // VRAM booked / VRAM total
};

// A replica or task still pending when the run ended.
struct UnplacedDemand {
  std::string label, app;
  Json request;
  bool forever = false;   // more of a resource than any node that joined offers
  std::string reason;
};

struct RunResult {
  std::string scenario, policies;
  std::uint64_t seed = 0;
  std::string workload;  // Scenario::workload_summary
  std::vector<AppOutcome> apps;
  RunMetrics metrics;
  std::vector<ExpectationResult> expectations;
  std::vector<UnplacedDemand> unplaced;
  std::vector<std::string> status_lines;  // from --status-at and status actions
  std::vector<CriticalPath> critical_paths;
  std::vector<ServeOutcome> serving;      // per serving app
  RequestRecords requests;                // with RunOptions::keep_requests or requests_csv_path
  Json status_snapshots = Json::array();  // with RunOptions::keep_status_snapshots: as --status-json writes them
  bool all_held() const;
};

RunResult run_scenario(const Scenario& scenario, const RunOptions& options);

// The line `run` prints when worker jobs reached their time limit while
// serving (RunMetrics::jobs_timeout_serving > 0): how many, the replicas and
// requests lost with them.
std::string time_limit_note(const RunMetrics& m);

// The scenario's apps as task shapes (one per app, in order), by replicas:
// an exact GPU request as it is, -1 a whole GPU, a VRAM figure as a share of
// the smallest partition GPU; the models of an `accelerator_type:` resource
// the app asks for (an openb pod's gpu_spec).
std::vector<TaskShape> scenario_tasks(const Scenario& sc);
constexpr double kTypicalPopularity = 0.95;  // the FGD paper's popularity threshold

// The scenario's head node, registered at time 0 (both worlds have one).
void add_head_node(ClusterState& cluster, TraceRecorder& trace, const Scenario& scenario);

void print_summary(const RunResult& r, std::ostream& out);
// Side-by-side table of several runs of one scenario.
// `required`: indices of the runs whose failed expectations are listed
// under the table.
void print_comparison(const std::vector<RunResult>& runs, std::ostream& out,
                      const std::vector<std::size_t>& required = {});

}  // namespace vramsim
