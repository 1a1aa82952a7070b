#pragma once
// What one run of a scenario gives: per app its outcome, the run's metrics
// (scenario/run_metrics.hpp), every expectation held or not, what stayed
// pending, the serving apps' request figures, and the outputs kept in
// memory where they were asked for (status snapshots, request records).
#include <optional>
#include <string>
#include <vector>

#include "analysis/critical_path.hpp"
#include "control/router.hpp"
#include "engine/trace.hpp"
#include "scenario/run_metrics.hpp"

namespace vramsim {

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

// A replica or task still pending when the run ended.
struct UnplacedDemand {
  std::string label, app;
  Json request;
  bool forever = false;   // more of a resource than any node that joined offers
  std::string reason;
};

// One serving app's requests (docs/serving.md, "Metrics"): latency
// percentiles count every request that never completed (refused, timed out,
// lost with its node, still waiting at the end) as infinite.
struct ServeOutcome {
  std::string app;
  std::uint64_t arrived = 0, completed = 0, refused = 0, timed_out = 0, failed = 0, unfinished = 0, cold = 0;
  std::uint64_t dispatched = 0, waited = 0;           // taken by a replica; of those, after a wait
  std::optional<double> wait_mean_s;                 // over the requests a replica took
  std::optional<double> latency_mean_s;              // over the completed requests
  std::optional<double> p50_s, p95_s, p99_s;         // +inf: the rank falls on a request that never completed
  std::optional<double> slo_attainment;              // with an slo_latency_s
  double replica_seconds = 0;
  // The app's sharing curves, and the sharing its requests met: the most
  // replicas busy on one device at once, the most requests on one replica.
  std::string device_sharing, replica_concurrency;
  int peak_device_busy = 0, peak_in_service = 0;
  // The first request that waited for a cold start: arrival, when a replica
  // took it, when it was answered.
  std::optional<SimTime> cold_arrival, cold_dispatch, cold_done;
};

struct RunResult {
  std::string scenario, policies;
  std::uint64_t seed = 0;
  std::string workload;  // Scenario::workload_summary
  std::vector<AppOutcome> apps;
  RunMetrics metrics;
  // Those of `status` actions as they fired, then $.expect in order.
  std::vector<ExpectationResult> expectations;
  std::vector<UnplacedDemand> unplaced;
  std::vector<std::string> status_lines;  // from --status-at and status actions
  std::vector<CriticalPath> critical_paths;
  std::vector<ServeOutcome> serving;      // per serving app
  RequestRecords requests;                // with RunOutputs::keep_requests or requests_csv_path
  Json status_snapshots = Json::array();  // with RunOutputs::keep_status_snapshots: as --status-json writes them
  bool all_held() const;
};

}  // namespace vramsim
