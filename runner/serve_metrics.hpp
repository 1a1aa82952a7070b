#pragma once
// The request figures of a run's serving apps (docs/serving.md, "Metrics"):
// latency percentiles that count every request that never completed
// (refused, timed out, lost with its node, still waiting at the end) as
// infinite, so a failure is never left out of them; waits, cold starts,
// SLO attainment, replica-seconds, and the cost of the GPU time the worker
// jobs held.
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "control/router.hpp"

namespace vramsim {

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

ServeOutcome serve_outcome(const std::string& app, ServeStats& stats);

// Every app's requests pooled into the run's req_* metrics.
struct ServeTotals {
  std::uint64_t completed = 0, refused = 0, timed_out = 0, failed = 0, unfinished = 0, cold = 0;
  std::optional<double> wait_mean_s, latency_mean_s, p50_s, p95_s, p99_s, slo_attainment;
  double replica_seconds = 0;
};
ServeTotals serve_totals(std::map<std::string, ServeStats>& stats);

// "1.25s", or "never" for an infinite one, "-" for none.
std::string format_latency(std::optional<double> s);
void print_serve_table(const std::vector<ServeOutcome>& apps, std::ostream& out);

}  // namespace vramsim
