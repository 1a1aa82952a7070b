#include "tools/agent/child_process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <csignal>
#include <cerrno>
#include <cstring>

#include "backends/cuda/gpu_detector.hpp"

extern char** environ;

namespace vramsim::agent {

namespace {
bool overridden(const std::string& entry, const SpawnOptions& o) {
  auto name = entry.substr(0, entry.find('='));
  for (const auto& e : o.env)
    if (e.substr(0, e.find('=')) == name) return true;
  for (const auto& u : o.unset_env)
    if (u == name) return true;
  return false;
}
}  // namespace

SpawnedChild spawn_child(const std::vector<std::string>& argv, const SpawnOptions& o) {
  SpawnedChild c;
  if (argv.empty()) {
    c.error = "empty command";
    return c;
  }
  const auto exe = gpu::find_executable(argv[0]);
  if (!exe) {
    c.error = argv[0] + ": not found or not executable";
    return c;
  }
  int in[2] = {-1, -1}, out[2] = {-1, -1};
  if ((o.pipe_stdin && ::pipe2(in, O_CLOEXEC) != 0) || ::pipe2(out, O_CLOEXEC) != 0) {
    c.error = std::string("pipe: ") + std::strerror(errno);
    for (int fd : {in[0], in[1], out[0], out[1]})
      if (fd >= 0) ::close(fd);
    return c;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (o.pipe_stdin) {
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  } else {
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  if (o.quiet_stderr) posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);

  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e)
    if (!overridden(*e, o)) env_strings.emplace_back(*e);
  for (const auto& e : o.env) env_strings.push_back(e);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  // The agent ignores SIGPIPE; its children must not inherit that.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGINT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, exe->c_str(), &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (o.pipe_stdin) ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    c.error = "cannot start " + *exe + ": " + std::strerror(rc);
    if (o.pipe_stdin) ::close(in[1]);
    ::close(out[0]);
    return c;
  }
  c.pid = pid;
  c.stdin_fd = o.pipe_stdin ? in[1] : -1;
  c.stdout_fd = out[0];
  return c;
}

}  // namespace vramsim::agent
