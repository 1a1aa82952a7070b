#pragma once
// The head of one live run, as named steps: check the names the worker
// script will carry, preflight SLURM, build the world on the wall clock, run
// until the scenario's shutdown has drained, then write the outcome.
// run_live (live_run.hpp) is its one user.
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "backends/slurm/slurm_backend.hpp"
#include "control/control_plane.hpp"
#include "engine/random.hpp"
#include "live/head_address.hpp"
#include "live/live_run.hpp"
#include "live/wall_clock_executor.hpp"
#include "models/policy_set.hpp"
#include "runner/scenario_driver.hpp"

namespace vramsim {

class StatusListener;

class LiveHead {
 public:
  LiveHead(const Scenario& scenario, const LiveOptions& options, std::ostream& log);
  ~LiveHead();
  LiveHead(const LiveHead&) = delete;
  LiveHead& operator=(const LiveHead&) = delete;

  // The whole run; call once. Throws LiveOptionError before it creates
  // anything when a name cannot go into the worker script.
  LiveOutcome run();

 private:
  // Before the clock starts.
  void choose_names();
  void create_workdir();
  bool preflight();
  SlurmBackendConfig backend_config() const;
  // The world on the wall clock.
  void build_world();
  std::unique_ptr<RunObserver> status_listener();
  void record_start();
  // How the run ends.
  void schedule_run_end();
  void start_shutdown(const std::string& why, std::optional<Duration> blocking_timeout = std::nullopt);
  void maybe_finish();
  void finish();
  void drain_check();
  void on_fatal(const std::string& error);
  void watch_signals();
  void wait_signal();
  void on_signal(int sig);
  // After the loop.
  void cancel_after_abort();
  void write_outcome();

  const Scenario& sc_;
  const LiveOptions& opt_;
  std::ostream& log_;
  LiveOutcome out_;
  std::uint64_t seed_ = 0;
  PolicySet policies_;
  std::string agent_program_, secret_path_;
  HeadEndpoints endpoints_;

  boost::asio::io_context io_;
  std::unique_ptr<WallClockExecutor> exec_;  // built after the preflight: its clock starts then
  std::unique_ptr<RandomStreams> rng_;
  TraceRecorder trace_;
  ClusterState cluster_;
  std::unique_ptr<SlurmBackend> backend_;
  std::unique_ptr<ControlPlane> control_;
  std::unique_ptr<ScenarioDriver> driver_;
  StatusListener* status_listener_ = nullptr;  // an observer the driver owns

  // The run ends once the control plane has shut down and no action is left.
  std::size_t actions_left_ = 0;
  bool stopping_ = false, aborted_ = false;
  int signals_seen_ = 0;
  boost::asio::steady_timer drain_timer_{io_};
  std::chrono::steady_clock::time_point drain_deadline_;
  std::optional<boost::asio::signal_set> signals_;  // from the run's start: SIGINT before it ends the program
};

}  // namespace vramsim
