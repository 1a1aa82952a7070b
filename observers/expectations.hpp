#pragma once
// The scenario's $.expect, each checked as the run goes and reported in
// order once every metric is in: app expectations (a state reached in time
// or held at the end, admission, message, reservation) and event
// expectations (how many events match a pattern, from the start, after or
// before an anchor event, within a window) from the events as they come;
// status-line expectations from a status snapshot taken at their time;
// metric expectations from the run's metrics; invariants from the
// invariants observer, which watched every event.
#include <map>
#include <optional>
#include <vector>

#include "observers/invariants.hpp"
#include "observers/run_observer.hpp"
#include "observers/status_snapshots.hpp"

namespace vramsim {

class Expectations final : public RunObserver {
 public:
  Expectations(const Scenario& sc, const Invariants& invariants, StatusSnapshots& status);
  TraceKindSet kinds() const override { return kinds_; }
  void start() override;
  void on_event(const TraceEvent& e) override;
  void close(SimTime end) override { end_ = end; }
  void conclude(RunResult& result) override;

 private:
  // What an app expectation needs of the trace: the app's first deploy
  // request, first RUNNING-or-other state wanted, first admission and
  // first sizing.
  struct AppWatch {
    std::optional<SimTime> requested, reached;
    std::optional<TraceEvent> admission, sizing;
  };
  // An event expectation's count so far.
  struct EventWatch {
    bool anchored = false;           // `after`: its first match seen (then counting)
    bool stopped = false;            // `before`: its first match seen (counting over)
    std::optional<SimTime> until;    // the window's end
    std::int64_t count = 0;
    std::optional<SimTime> first;
  };
  ExpectationResult check_app(const Expectation& e) const;
  ExpectationResult check_event(const Expectation& e) const;
  ExpectationResult check_status_line(const Expectation& e) const;
  void watch_event(const Expectation& e, EventWatch& w, const TraceEvent& ev);

  const Scenario& sc_;
  const Invariants& invariants_;
  StatusSnapshots& status_;
  TraceKindSet kinds_;
  std::map<const Expectation*, AppWatch> apps_;
  std::map<const Expectation*, EventWatch> events_;
  std::map<const Expectation*, ExpectationResult> lines_;  // status lines, once taken
  SimTime end_ = 0;
};

}  // namespace vramsim
