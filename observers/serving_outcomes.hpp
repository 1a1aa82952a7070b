#pragma once
// What each serving app's requests met (docs/serving.md, "Metrics"): at the
// run's end the router settles every request still waiting or in service,
// each app's figures are traced (`serve_summary`, before `run_ended`) and
// kept, and the run's req_* metrics pool the requests the scenario's
// metrics_app names (every application's, once each at its ingress, by
// default).
#include <map>
#include <string>

#include "observers/run_observer.hpp"

namespace vramsim {

// One app's figures from the router's, and every app's pooled.
ServeOutcome serve_outcome(const std::string& app, ServeStats& stats);
struct ServeTotals {
  std::uint64_t completed = 0, refused = 0, timed_out = 0, failed = 0, unfinished = 0, cold = 0;
  std::optional<double> wait_mean_s, latency_mean_s, p50_s, p95_s, p99_s, slo_attainment;
  double replica_seconds = 0;
};
ServeTotals serve_totals(std::map<std::string, ServeStats>& stats);

class ServingOutcomes final : public RunObserver {
 public:
  void end_records(SimTime end) override;
  void measure(RunResult& result) override;

 private:
  std::map<std::string, ServeStats> stats_;
};

}  // namespace vramsim
