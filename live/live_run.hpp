#pragma once
// One live run of a scenario: the head. The same scenario file, policy models
// and control plane as `vramsim run`, on the wall clock (scaled by
// --time-scale) against a real SLURM through SlurmBackend; actions fire on
// the wall clock and the run writes the same JSON Lines trace. See
// docs/live-mode.md.
#include <chrono>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/slurm/slurm_client.hpp"
#include "observers/observer_factory.hpp"
#include "observers/run_result.hpp"
#include "scenario/scenario.hpp"

namespace vramsim {

// Exit statuses beyond vramsim run's 0/1/2/3/4.
constexpr int kExitLiveBackend = 5;   // SLURM unreachable or the head could not serve agents
constexpr int kExitLiveAborted = 130; // a second SIGINT/SIGTERM

struct LiveOptions {
  std::optional<std::string> policies;
  std::optional<std::uint64_t> seed;
  double time_scale = 1.0;                 // wall seconds per scenario second
  std::string bind;                        // agent listener's address; "": every address (head_address.hpp)
  std::string advertise;                   // HOST[:PORT] agents dial; "": see choose_head_endpoints
  unsigned short agent_port = 0;           // 0: any free port
  int status_port = -1;                    // -1: no status listener; 0: any free port
  std::string run_id;                      // default: generated
  std::string workdir;                     // default: ./vramsim-live/<run_id>
  std::string agent_program;               // default: vramsim-agent beside this program, else on PATH
  // What the run writes and keeps, as `vramsim run` takes them; the trace
  // goes to <workdir>/trace.jsonl where outputs.trace_path is empty, each
  // event flushed as it comes.
  RunOutputs outputs;
  std::chrono::milliseconds agent_timeout{15000};  // wall: silence after which a node is lost
  double agent_heartbeat_s = 0;                    // wall; 0: the agent's default
  double agent_connect_timeout_s = 60;             // wall: how long an agent keeps trying to reach the head
  std::chrono::milliseconds squeue_poll{2000};
  std::chrono::milliseconds squeue_watch_poll{250};    // SlurmBackendConfig::squeue_watch_poll
  std::chrono::milliseconds squeue_watch_window{10000};
  std::chrono::milliseconds outage_tolerance{300000};  // SlurmBackendConfig::outage_tolerance
  std::chrono::milliseconds drain_wait{120000};    // after shutdown, wait at most this long for squeue to empty
  int max_failed_starts = 5;                       // SlurmBackendConfig::max_failed_starts
  SlurmJobOptions site;                            // SlurmBackendConfig::site
  slurm::SlurmClientConfig client;
  // Agents wait the scenario's drawn node_boot + registration before they
  // register, and its job_exit_after_stop after a drain: the SLURM queue and
  // the agent channel stay real, the boot is emulated.
  bool emulate_boot = false;
};

// A run id, path or address that the worker job's sbatch script cannot
// carry as it is: it becomes a word of a shell command line and of #SBATCH
// lines, and SLURM expands '%' in --output. The message names the option;
// vramsim live exits 2. Thrown by run_live before it creates anything.
class LiveOptionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A run id is checked by slurm::run_id_problem (backends/slurm/ids.hpp).
// Empty when `path` can go into the worker script (A-Z a-z 0-9 and
// / . _ - + = , @ :), else what is wrong with it.
std::string script_path_problem(const std::string& path);

struct LiveOutcome {
  RunResult result;
  int exit_code = 0;
  std::string error;       // one line when exit_code is kExitLiveBackend
  std::string run_id, workdir, trace_path;
  std::vector<std::string> jobs_left;  // still in squeue when the head exited
};

// Runs until the scenario's shutdown completes (the horizon starts it when the
// scenario has none), then returns. Progress lines go to `log`.
LiveOutcome run_live(const Scenario& scenario, const LiveOptions& options, std::ostream& log);

// `vramsim live --cleanup`: cancels every job of a run, found by its
// --comment in squeue and in the run's journal. Returns the exit status.
int cleanup_live_run(const std::string& run_id, const std::string& journal_path,
                     const slurm::SlurmClientConfig& client, std::ostream& out);

// `vramsim status --live HOST:PORT`: reads a running head's status lines.
int print_live_status(const std::string& address, std::ostream& out, std::ostream& err);

}  // namespace vramsim
