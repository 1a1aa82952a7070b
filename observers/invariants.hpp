#pragma once
// The scenario's invariant expectations (`"invariant": ...`), checked at
// every trace event and once more at the run's end: at most N worker jobs
// queued or running, no device's VRAM booked past the device, nothing left
// queued or running after shutdown. The first violation of each is kept;
// the expectations observer reports them in $.expect order.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "observers/run_observer.hpp"

namespace vramsim {

class Invariants final : public RunObserver {
 public:
  explicit Invariants(const Scenario& sc);
  TraceKindSet kinds() const override { return checks_.empty() ? TraceKindSet() : every_kind(); }
  void on_event(const TraceEvent& ev) override {
    if (ev.kind == TraceKind::shutdown_done) shutdown_done_ = true;
    check(ev.t, name(ev.kind));
  }
  void close(SimTime end) override { check(end, "run_end"); }
  // The verdict on one invariant expectation of the scenario.
  ExpectationResult result(const Expectation& e) const;

 private:
  struct Check {
    const Expectation* ex = nullptr;
    std::optional<std::string> violation;  // the first one
    std::int64_t worst = 0;                // max_worker_jobs: most jobs seen
  };
  void check(SimTime t, std::string_view label);
  std::vector<Check> checks_;
  bool shutdown_done_ = false;
};

}  // namespace vramsim
