#pragma once
// Drives one run of a scenario in whichever world it runs: the clock is the
// world's executor, the inputs are the scenario's actions and request
// traffic, and everything the run measures or writes is an observer
// (observers/run_observer.hpp) that the driver hands each trace event of
// the kinds it asked for, as it is recorded, and calls at each stage of
// the run's end. `vramsim run` (virtual time, simulated partition; see
// runner/simulation.hpp), `vramsim live` (wall clock, real SLURM; see
// live/live_head.hpp) and Python use it, so a scenario means the same thing
// in both worlds.
#include <array>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "observers/run_observer.hpp"
#include "workload/traffic_feed.hpp"

namespace vramsim {

// The parts of a world that a run drives.
struct RunWorld {
  Executor& exec;
  ClusterState& cluster;
  ClusterBackend& backend;
  ControlPlane& control;
  TraceRecorder& trace;
};

class ScenarioDriver {
 public:
  // Attaches the observers to the world's trace: call before the world
  // records its first event.
  ScenarioDriver(const Scenario& sc, RunWorld world, RunResult& result, RunObservers observers);
  ~ScenarioDriver();
  ScenarioDriver(const ScenarioDriver&) = delete;
  ScenarioDriver& operator=(const ScenarioDriver&) = delete;

  // The run's first event, `run_started`: the scenario, seed and policies,
  // and `extra` fields of the world's (a live run's mode, address, ...).
  void record_run_started(const Json& extra);
  // The rest of the start: the head node registers at 0; `start_world`
  // starts what the world has up from the start (warm workers); the control
  // plane keeps each monitor pass's status if an observer reads it, and
  // starts; then the actions and the traffic are scheduled, and last the
  // observers' own samples.
  void start(const std::function<void()>& start_world = {});

  // What a `shutdown` action does; default: the control plane's shutdown.
  std::function<void(std::optional<Duration> blocking_timeout)> on_shutdown_action;
  // Runs after every action (live: is the run over?).
  std::function<void()> after_action;

  // The status as a query now sees it: the last monitor pass's snapshot, or
  // the cluster now where no pass is kept.
  Json status_now() { return world_.control.status(); }

  // The run's end at `end` after `events` executor events: the observers'
  // end-of-run records, `run_ended` (with `end_fields`), then each stage
  // (observers/run_observer.hpp) over every observer in turn.
  void finish(SimTime end, std::uint64_t events, const Json& end_fields);

 private:
  class Dispatch;
  void schedule_actions();
  void act(const ScenarioAction& a);

  const Scenario& sc_;
  RunWorld world_;
  RunResult& result_;
  RunContext ctx_;
  RunObservers observers_;
  std::shared_ptr<Dispatch> dispatch_;
  std::map<std::string, const AppSpec*> spec_of_;
  TrafficFeed traffic_;
};

// The scenario's head node, registered at time 0 (both worlds have one).
void add_head_node(ClusterState& cluster, TraceRecorder& trace, const Scenario& scenario);

}  // namespace vramsim
