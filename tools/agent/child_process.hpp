#pragma once
// Starting the agent's child processes (replicas, nvidia-smi queries) with
// pipes the agent's Asio loop reads and writes; reaping is the caller's
// (SIGCHLD on the same loop).
#include <sys/types.h>

#include <string>
#include <vector>

namespace vramsim::agent {

struct SpawnedChild {
  pid_t pid = -1;
  int stdin_fd = -1;   // write end of the child's stdin, -1 when /dev/null
  int stdout_fd = -1;  // read end of the child's stdout
  std::string error;   // set when the spawn failed
};

struct SpawnOptions {
  bool pipe_stdin = false;   // else the child's stdin is /dev/null
  bool quiet_stderr = false; // else the child's stderr is the agent's
  std::vector<std::string> env;  // NAME=VALUE overrides of the agent's environment
  std::vector<std::string> unset_env;
};

// argv[0] is run as given (a path) or looked up on PATH (no '/').
SpawnedChild spawn_child(const std::vector<std::string>& argv, const SpawnOptions& options);

}  // namespace vramsim::agent
