#pragma once
// An observer of one run: it sees the trace events it asks for as they are
// recorded, may schedule samples of its own, and when the run ends closes
// its files and adds what it measured to the RunResult. Every output of a
// run (the JSON Lines and Chrome traces, status snapshots and timelines,
// the serving timeline, the fragmentation and requests CSVs, the summary
// JSON) and every figure (metrics, outcomes, invariants, expectations) is
// one observer; make_run_observers (observer_factory.hpp) builds the list
// for a simulated run, a live run and a Python call alike, and the driver
// (runner/scenario_driver.hpp) calls them.
//
// The run's end goes in stages, each reading only what earlier stages
// wrote, in the order the driver calls them:
//   end_records  before `run_ended`: trace records of the run's end
//   close        after the trace closed: files flushed and closed
//   measure      the figures an observer took from what it saw
//   account      the world's own account (jobs as its backend saw them),
//                which replaces what the trace measured where it knows more
//   derive       figures computed from others' (cost from GPU-hours)
//   conclude     outcomes and expectations, over every figure
//   publish      outputs of the whole result (the summary JSON)
#include <bitset>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cluster_backend.hpp"
#include "control/control_plane.hpp"
#include "engine/executor.hpp"
#include "engine/trace.hpp"
#include "observers/run_result.hpp"
#include "scenario/scenario.hpp"

namespace vramsim {

// The world a run drives and its observers inspect, and the result they
// write into.
struct RunContext {
  const Scenario& scenario;
  Executor& exec;
  ClusterState& cluster;
  ClusterBackend& backend;
  ControlPlane& control;
  TraceRecorder& trace;
  RunResult& result;
};

// The trace kinds an observer is handed.
using TraceKindSet = std::bitset<kTraceKindCount>;
inline TraceKindSet kinds_of(std::initializer_list<TraceKind> kinds) {
  TraceKindSet s;
  for (TraceKind k : kinds) s.set(static_cast<std::size_t>(k));
  return s;
}
inline TraceKindSet every_kind() { return TraceKindSet().set(); }

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // The run it observes; the driver calls this first.
  void attach(const RunContext& ctx) { ctx_ = &ctx; }

  // The kinds of event on_event is called for (none by default).
  virtual TraceKindSet kinds() const { return {}; }
  // Whether it reads the cluster status as a query sees it: the control
  // plane then keeps each monitor pass's snapshot from its start.
  virtual bool reads_status() const { return false; }

  // Once attached, before the run's first event: nothing scheduled yet.
  virtual void prepare() {}
  // After the run's inputs (actions, traffic) are scheduled: samples of its own.
  virtual void start() {}
  // Each event of kinds(), as it is recorded.
  virtual void on_event(const TraceEvent&) {}
  // A scenario action as it fires (a `status` action's snapshot).
  virtual void on_action(const ScenarioAction&) {}

  virtual void end_records(SimTime /*end*/) {}
  virtual void close(SimTime /*end*/) {}
  virtual void measure(RunResult&) {}
  virtual void account(RunResult&) {}
  virtual void derive(RunResult&) {}
  virtual void conclude(RunResult&) {}
  virtual void publish(const RunResult&) {}

 protected:
  const RunContext& ctx() const { return *ctx_; }

 private:
  const RunContext* ctx_ = nullptr;
};

using RunObservers = std::vector<std::unique_ptr<RunObserver>>;

}  // namespace vramsim
