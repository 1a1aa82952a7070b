#pragma once
// Runs child processes (sbatch, squeue, scancel, ...) from the single-threaded
// Asio loop without ever blocking it.
//
// Each child is started with posix_spawn (no shell) in its own process group,
// with its standard streams connected to the runner: stdin is fed the spec's
// data asynchronously, stdout and stderr are read asynchronously and capped
// at kOutputCap bytes each (the rest is read and dropped, so the child never
// stalls on a full pipe; the result says it was truncated). A child still
// running at its timeout is killed with SIGKILL, its whole process group with
// it. Children are reaped with waitpid on their own pid only, polled from a
// timer: no SIGCHLD handler is installed, so signal_sets elsewhere in the
// program are left alone and no zombie is left behind.
//
// Cost: per child three descriptors and one timer; the poll interval starts
// at 1 ms and doubles to 50 ms, so a child that runs for T seconds costs
// about 20 T wake-ups.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "engine/text.hpp"

namespace vramsim::slurm {

struct CommandSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on the child's PATH
  std::string stdin_data;         // written, then stdin is closed
  std::chrono::milliseconds timeout{10000};
  // Added to (or replacing in) the inherited environment.
  std::vector<std::pair<std::string, std::string>> env;
};

struct CommandResult {
  std::string program;  // argv[0] as given, for messages
  int exit_code = -1;   // -1 unless the child exited normally
  int signal = 0;       // the signal that ended the child, if one did
  bool timed_out = false;
  std::string spawn_error;  // set when the child could not be started
  std::string out, err;
  bool out_truncated = false, err_truncated = false;
  std::chrono::milliseconds timeout{0};
  std::chrono::milliseconds elapsed{0};

  bool ok() const { return spawn_error.empty() && !timed_out && signal == 0 && exit_code == 0; }
  // One line: "sbatch: exit 1: <first stderr line>", "sbatch: timed out after
  // 10 s", "sbatch: could not start: ...", "sbatch: killed by signal 9".
  std::string describe() const;
};

// Bytes of stdout and of stderr kept per child.
inline constexpr std::size_t kOutputCap = 1 << 20;

// The io_context must outlive the runner.
class ProcessRunner {
 public:
  explicit ProcessRunner(boost::asio::io_context& io);
  // Kills (SIGKILL to the group) and reaps every child still running; their
  // callbacks are not called.
  ~ProcessRunner();
  ProcessRunner(const ProcessRunner&) = delete;
  ProcessRunner& operator=(const ProcessRunner&) = delete;

  // Starts the command; `done` runs on the loop exactly once, never from
  // inside run() itself (a spawn failure is posted too).
  void run(CommandSpec spec, std::function<void(CommandResult)> done);
  std::size_t in_flight() const;

  struct Child;
  struct Registry;

 private:
  boost::asio::io_context& io_;
  std::shared_ptr<Registry> registry_;
};

using vramsim::first_line;  // engine/text.hpp

}  // namespace vramsim::slurm
