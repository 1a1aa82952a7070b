#pragma once
// Each app's outcome: admitted or rejected, its final state, its time to
// RUNNING (first deploy request to first RUNNING, as the trace tells it),
// its reservation shape and message; and the run's time-to-RUNNING
// percentiles over the apps that got there.
#include "analysis/trace_diff.hpp"
#include "observers/run_observer.hpp"

namespace vramsim {

class AppOutcomes final : public RunObserver {
 public:
  TraceKindSet kinds() const override { return kinds_of({TraceKind::deploy_requested, TraceKind::app_state}); }
  void on_event(const TraceEvent& e) override { to_running_.add(e); }
  void measure(RunResult& result) override;

 private:
  DeployToRunning to_running_;
};

}  // namespace vramsim
