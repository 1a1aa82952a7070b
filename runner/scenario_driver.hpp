#pragma once
// Drives one run of a scenario in whichever world it runs: the actions on the
// executor's clock, status snapshots, the invariants watched at every trace
// event, and at the end the apps' outcomes, the unplaced demand, the common
// metrics and every expectation. `vramsim run` (virtual time, simulated
// partition) and `vramsim live` (wall clock, real SLURM) both use it, so a
// scenario means the same thing in both.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cluster_backend.hpp"
#include "control/control_plane.hpp"
#include "engine/executor.hpp"
#include "engine/random.hpp"
#include "engine/output_file.hpp"
#include "engine/trace.hpp"
#include "models/status.hpp"
#include "analysis/fragmentation.hpp"
#include "scenario/scenario.hpp"
#include "runner/simulation.hpp"

namespace vramsim {

// The parts of a world that a run drives and inspects.
struct RunView {
  Executor& exec;
  ClusterState& cluster;
  ClusterBackend& backend;
  ControlPlane& control;
  TraceRecorder& trace;
};

class RunWatcher;

class ScenarioDriver {
 public:
  ScenarioDriver(const Scenario& sc, RunView world, RunResult& result);
  ~ScenarioDriver();

  // Adds the driver's sinks (every event in memory, the invariant watcher)
  // to the trace; call before the first event is recorded.
  void attach();
  // Schedules the actions, the status-line expectations, --status-at
  // snapshots and the --status-every timeline (CSV at `csv_path`).
  void schedule(const std::vector<Duration>& status_at, std::optional<Duration> status_every,
                const std::string& csv_path);
  // The serving timeline: every `window`, one CSV row per serving app
  // (docs/serving.md, "Timeline"), written to `path` as the run goes.
  void schedule_serve_timeline(const std::string& path, Duration window);
  // The FGD paper's picture (`--frag-csv`, docs/workloads-openb.md): one
  // CSV row per deployed app ("pod") just before the next arrival, so each
  // arrival's placement is settled: its GPU demand, the demand arrived so
  // far, the GPUs allocated, unallocated and fragmented against `typical`.
  // `tasks` are the scenario's apps as task shapes, in app order (their GPU
  // demand); `placement` names the policy in every row. With `nodes_path`,
  // each GPU node's figures at the end of the run.
  void schedule_fragmentation(const std::string& path, const std::string& nodes_path, const std::string& placement,
                              const std::vector<TaskShape>& tasks, const std::vector<TaskShape>& typical);
  // What a `shutdown` action does; default: the control plane's shutdown.
  std::function<void(std::optional<Duration> blocking_timeout)> on_shutdown_action;
  // Runs after every action (live: is the run over?).
  std::function<void()> after_action;

  // The status as a query now sees it: the last monitor pass's snapshot
  // (ClusterStatus), or the cluster now where no pass is kept.
  Json status_now();
  // Keeps each monitor pass's snapshot from now on (call before the control
  // plane starts): --status-at, --status-every, a live status port. A
  // scenario's own status actions and status-line expectations call it.
  void keep_status();
  // A status snapshot now: printed lines kept, traced, `expect` checked.
  Json take_status(const std::string& source, const Json& expect, const std::string& path);
  // Stops the timeline; traces unplaced demand and run_ended (with `end_fields`
  // added to {"events": n}); fills the common metrics, the apps and every
  // expectation. `world_metrics` adds what only the world knows (jobs
  // cancelled, timed out, left, orphaned allocation).
  void finish(SimTime end, std::uint64_t events, const Json& end_fields,
              const std::function<void(RunMetrics&)>& world_metrics);
  // Status snapshots taken, as a JSON array; throws naming the path on failure.
  void write_status_json(const std::string& path) const;
  const Json& status_snapshots() const { return snapshots_; }
  const std::vector<TraceEvent>& events() const;
  const StatusOptions& status_options() const { return status_opts_; }

 private:
  // The steps of finish(), in order.
  void close_trace(SimTime end, std::uint64_t events, const Json& end_fields);
  void count_metrics(SimTime end, std::uint64_t events, const std::function<void(RunMetrics&)>& world_metrics);
  void sample_fragmentation(RunMetrics& m);
  void app_outcomes();
  void check_expectations(SimTime end);
  // Serving traffic: each app's arrivals, one pending at a time.
  void schedule_traffic();
  void start_traffic(const std::string& app_id, SimTime origin);
  void next_arrival(const std::string& app_id);
  void serve_metrics(RunMetrics& m);
  void cost_metrics(RunMetrics& m);
  void fragmentation_rows(SimTime upto);  // rows for the arrivals at or before `upto`
  struct Traffic {
    std::unique_ptr<TrafficSource> source;
    SimTime origin = 0;
    std::optional<SimTime> end;
    bool started = false;
  };
  const Scenario& sc_;
  RunView w_;
  RunResult& result_;
  StatusOptions status_opts_;
  std::shared_ptr<MemorySink> memory_;
  std::shared_ptr<RunWatcher> watcher_;
  Json snapshots_ = Json::array();
  std::map<const Expectation*, ExpectationResult> line_results_;
  std::map<std::string, const AppSpec*> spec_of_;
  std::unique_ptr<OutputFile> csv_;
  UtilisationSampler sampler_;
  Executor::Periodic timeline_;
  std::map<std::string, Traffic> traffic_;
  RandomStreams traffic_rng_;
  std::unique_ptr<OutputFile> serve_csv_;
  std::map<std::string, ServeStats> serve_stats_;  // taken as the trace closes
  Executor::Periodic serve_timeline_;
  Duration serve_window_ = 0;
  struct Arrival {
    SimTime at = 0;
    std::string app;
    double gpus = 0;
  };
  std::vector<Arrival> arrivals_;
  std::size_t arrivals_written_ = 0;
  double arrived_gpus_ = 0;
  std::string frag_placement_, frag_nodes_path_;
  std::unique_ptr<OutputFile> frag_csv_;
  std::unique_ptr<FragmentationMeter> frag_meter_;
};

}  // namespace vramsim
