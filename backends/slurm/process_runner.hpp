#pragma once
// Starting child processes, in one place for the head and the node agent:
// spawn_process, and ProcessRunner, which runs commands (sbatch, squeue,
// scancel, nvidia-smi, ...) on the single-threaded Asio loop without ever
// blocking it.
//
// spawn_process forks and execs (no shell), so that the child can lead its
// own process group (one kill reaches all it started), get a parent-death
// signal (PR_SET_PDEATHSIG: a killed agent's replicas die with it), default
// dispositions and an empty mask for the signals a loop or a server may
// have set, and its streams connected as asked; an exec failure comes back
// as the error, not as a child that exits 127.
//
// ProcessRunner's children lead their own process group, with stdin fed the
// spec's data asynchronously, stdout and stderr read asynchronously and
// capped at kOutputCap bytes each (the rest is read and dropped, so the child
// never stalls on a full pipe; the result says it was truncated). A child
// still running at its timeout is killed with SIGKILL, its whole process
// group with it. Children are reaped with waitpid on their own pid only,
// polled from a timer: no SIGCHLD handler is installed, so signal_sets
// elsewhere in the program are left alone and no zombie is left behind.
//
// Cost: per child three descriptors and one timer; the poll interval starts
// at 1 ms and doubles to 50 ms, so a child that runs for T seconds costs
// about 20 T wake-ups.
#include <sys/types.h>

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

// How spawn_process starts one child.
struct SpawnSpec {
  // argv[0]: a path, or a name looked up on the PATH the child will see.
  std::vector<std::string> argv;
  // Added to (or replacing in) the inherited environment, and removed from it.
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> unset_env;
  // Every inherited variable whose name starts with one of these is removed
  // (those `env` sets are then added).
  std::vector<std::string> unset_env_prefixes;
  // Null: /dev/null; Pipe: a pipe to us; Socket: a Unix stream socket to us
  // (writes to it raise no SIGPIPE); Inherit: ours.
  enum class Stream { Null, Pipe, Socket, Inherit };
  Stream in = Stream::Null, out = Stream::Pipe, err = Stream::Pipe;
  bool own_process_group = true;  // the child leads a new group (kill_child reaches all of it)
  // Sent to the child when the thread that spawned it exits, the process
  // killed included (PR_SET_PDEATHSIG); 0: none.
  int parent_death_signal = 0;
};

struct SpawnedChild {
  pid_t pid = -1;
  // Our ends of the child's streams, close-on-exec; -1 where not connected.
  int in = -1, out = -1, err = -1;
  std::string error;  // why it did not start ("not found on PATH", ...); pid is then -1
};

// Starts the child; the caller reaps it (waitpid on its pid) and closes the
// descriptors. Safe in a threaded program: the child runs only
// async-signal-safe calls between fork and exec.
SpawnedChild spawn_process(const SpawnSpec& spec);
// SIGKILL to the child, and to its process group when it leads one.
void kill_child(pid_t pid, bool its_group);

struct CommandSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on the child's PATH
  std::string stdin_data;         // written, then stdin is closed
  std::chrono::milliseconds timeout{10000};
  // Added to (or replacing in) the inherited environment.
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> unset_env_prefixes;  // SpawnSpec::unset_env_prefixes
  int parent_death_signal = 0;  // SpawnSpec::parent_death_signal
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
  // Checks every child for its exit now rather than at its next poll: for an
  // owner that watches SIGCHLD itself (the agent), so that an exit is seen
  // at once.
  void check_exits();

  struct Child;
  struct Registry;

 private:
  boost::asio::io_context& io_;
  std::shared_ptr<Registry> registry_;
};

using vramsim::first_line;  // engine/text.hpp

}  // namespace vramsim::slurm
