#include "backends/slurm/process_runner.hpp"

#include "engine/time.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

extern char** environ;

namespace vramsim::slurm {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// A child that exited while something it started still holds its pipes open
// is given this long to finish writing before the pipes are closed.
constexpr milliseconds kPipeGrace{1000};
constexpr milliseconds kMaxPoll{50};

std::string errno_text(int err) { return std::strerror(err); }

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Looks the program up on the PATH the child will see, which may differ
// from ours (posix_spawnp would search ours).
std::string resolve(const std::string& program, const std::string& path) {
  if (program.find('/') != std::string::npos) return is_executable_file(program) ? program : "";
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + program;
    if (is_executable_file(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

std::vector<std::string> child_environment(const SpawnSpec& spec) {
  auto dropped = [&](const std::string& key) {
    for (const auto& [k, v] : spec.env)
      if (k == key) return true;
    for (const auto& u : spec.unset_env)
      if (u == key) return true;
    for (const auto& p : spec.unset_env_prefixes)
      if (key.compare(0, p.size(), p) == 0) return true;
    return false;
  };
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    if (!dropped(entry.substr(0, entry.find('=')))) env.push_back(entry);
  }
  for (const auto& [k, v] : spec.env) env.push_back(k + "=" + v);
  return env;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Our end and the child's end of one standard stream; -1 where there is none.
struct StreamEnds {
  int ours = -1, theirs = -1;
};

// Creates the descriptors for one stream; false with errno set on failure.
bool open_stream(SpawnSpec::Stream kind, bool child_reads, StreamEnds& e) {
  int fds[2] = {-1, -1};
  switch (kind) {
    case SpawnSpec::Stream::Null:
      e.theirs = ::open("/dev/null", (child_reads ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
      return e.theirs >= 0;
    case SpawnSpec::Stream::Inherit:
      return true;
    case SpawnSpec::Stream::Socket:
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return false;
      e.ours = fds[0];
      e.theirs = fds[1];
      return true;
    case SpawnSpec::Stream::Pipe:
      if (::pipe2(fds, O_CLOEXEC) != 0) return false;
      e.ours = child_reads ? fds[1] : fds[0];
      e.theirs = child_reads ? fds[0] : fds[1];
      return true;
  }
  return false;
}

// In the child, between fork and exec: async-signal-safe calls only. Writes
// the errno of what failed to `report` and exits.
[[noreturn]] void exec_child(const SpawnSpec& spec, pid_t parent, const StreamEnds (&ends)[3], int report,
                             const char* exe, char* const* argv, char* const* envp) {
  auto fail = [report] {
    const int e = errno;
    [[maybe_unused]] ssize_t n = ::write(report, &e, sizeof e);
    ::_exit(127);
  };
  if (spec.own_process_group && ::setpgid(0, 0) != 0) fail();
  if (spec.parent_death_signal != 0) {
    if (::prctl(PR_SET_PDEATHSIG, spec.parent_death_signal) != 0) fail();
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took hold
  }
  for (int fd = 0; fd < 3; ++fd) {
    const int from = ends[fd].theirs;
    if (from < 0) continue;  // inherited
    if (from == fd) {
      if (::fcntl(fd, F_SETFD, 0) != 0) fail();
    } else if (::dup2(from, fd) < 0) {
      fail();
    }
  }
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2})
    ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(exe, argv, envp);
  fail();
  ::_exit(127);
}

}  // namespace

SpawnedChild spawn_process(const SpawnSpec& spec) {
  SpawnedChild c;
  if (spec.argv.empty()) {
    c.error = "empty command";
    return c;
  }
  const std::vector<std::string> env = child_environment(spec);
  std::string path;
  for (const auto& e : env)
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  const std::string exe = resolve(spec.argv.front(), path);
  if (exe.empty()) {
    c.error = spec.argv.front().find('/') != std::string::npos ? "not an executable file" : "not found on PATH";
    return c;
  }
  // Everything the child needs is ready before the fork.
  std::vector<char*> argv_c, env_c;
  for (const auto& a : spec.argv) argv_c.push_back(const_cast<char*>(a.c_str()));
  argv_c.push_back(nullptr);
  for (const auto& e : env) env_c.push_back(const_cast<char*>(e.c_str()));
  env_c.push_back(nullptr);

  StreamEnds ends[3];
  int report[2] = {-1, -1};
  auto close_all = [&] {
    for (auto& e : ends) {
      close_fd(e.ours);
      close_fd(e.theirs);
    }
    close_fd(report[0]);
    close_fd(report[1]);
  };
  if (!open_stream(spec.in, true, ends[0]) || !open_stream(spec.out, false, ends[1]) ||
      !open_stream(spec.err, false, ends[2]) || ::pipe2(report, O_CLOEXEC) != 0) {
    const int e = errno;
    close_all();
    c.error = "could not create pipes: " + errno_text(e);
    return c;
  }
  // Signals stay blocked across the fork, so that none runs one of our
  // handlers in the child before its dispositions are reset.
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(spec, parent, ends, report[1], exe.c_str(), argv_c.data(), env_c.data());
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  close_fd(report[1]);
  for (auto& e : ends) close_fd(e.theirs);
  if (pid < 0) {
    close_all();
    c.error = exe + ": " + errno_text(fork_errno);
    return c;
  }
  // The report pipe closes on exec; an errno on it means the exec failed.
  int child_errno = 0;
  ssize_t n = 0;
  do n = ::read(report[0], &child_errno, sizeof child_errno);
  while (n < 0 && errno == EINTR);
  close_fd(report[0]);
  if (n > 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    close_all();
    c.error = exe + ": " + errno_text(child_errno);
    return c;
  }
  c.pid = pid;
  c.in = ends[0].ours;
  c.out = ends[1].ours;
  c.err = ends[2].ours;
  return c;
}

void kill_child(pid_t pid, bool its_group) {
  if (pid <= 0) return;
  if (its_group) ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);  // also when it left its group
}

std::string CommandResult::describe() const {
  const std::string who = (program.empty() ? std::string("command") : program) + ": ";
  if (!spawn_error.empty()) return who + "could not start: " + spawn_error;
  if (timed_out) return who + "timed out after " + format_duration(std::chrono::duration_cast<std::chrono::microseconds>(timeout).count());
  if (signal != 0) return who + "killed by signal " + std::to_string(signal);
  if (exit_code < 0) return who + "exit status unknown (the child was reaped elsewhere)";
  std::string line = first_line(err);
  if (line.empty()) line = first_line(out);
  return who + "exit " + std::to_string(exit_code) + (line.empty() ? "" : ": " + line);
}

struct ProcessRunner::Registry {
  std::set<std::shared_ptr<Child>> live;
};

struct ProcessRunner::Child : std::enable_shared_from_this<Child> {
  explicit Child(asio::io_context& io) : in(io), out(io), err(io), poll(io), deadline(io) {}

  asio::local::stream_protocol::socket in;
  asio::posix::stream_descriptor out, err;
  asio::steady_timer poll, deadline;
  pid_t pid = -1;
  CommandResult result;
  std::string stdin_data;
  std::array<char, 65536> out_buf{}, err_buf{};
  bool out_eof = false, err_eof = false, exited = false, finished = false, abandoned = false;
  Clock::time_point start, exit_time;
  milliseconds poll_interval{1};
  std::function<void(CommandResult)> done;
  std::weak_ptr<Registry> registry;

  void close_streams() {
    boost::system::error_code ignored;
    out.close(ignored);
    err.close(ignored);
    out_eof = err_eof = true;
  }

  void finish_if_done() {
    if (finished || !exited || !out_eof || !err_eof) return;
    finished = true;
    boost::system::error_code ignored;
    in.close(ignored);
    poll.cancel();
    deadline.cancel();
    result.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
    auto self = shared_from_this();
    if (auto reg = registry.lock()) reg->live.erase(self);
    auto cb = std::move(done);
    cb(std::move(result));
  }

  void read(bool is_out) {
    auto& d = is_out ? out : err;
    auto& buf = is_out ? out_buf : err_buf;
    d.async_read_some(asio::buffer(buf), [self = shared_from_this(), is_out](
                                              const boost::system::error_code& ec, std::size_t n) {
      if (self->abandoned || self->finished) return;
      std::string& text = is_out ? self->result.out : self->result.err;
      bool& truncated = is_out ? self->result.out_truncated : self->result.err_truncated;
      const auto& b = is_out ? self->out_buf : self->err_buf;
      if (n > 0) {
        const std::size_t room = kOutputCap - std::min(kOutputCap, text.size());
        text.append(b.data(), std::min(room, n));
        if (n > room) truncated = true;
      }
      if (ec) {
        (is_out ? self->out_eof : self->err_eof) = true;
        boost::system::error_code ignored;
        (is_out ? self->out : self->err).close(ignored);
        self->finish_if_done();
        return;
      }
      self->read(is_out);
    });
  }

  void write_stdin() {
    if (stdin_data.empty()) {
      boost::system::error_code ignored;
      in.close(ignored);
      return;
    }
    // A socket, not a pipe: Asio sends with MSG_NOSIGNAL, so a child that
    // exits without reading its input costs an EPIPE here, not a SIGPIPE.
    asio::async_write(in, asio::buffer(stdin_data),
                      [self = shared_from_this()](const boost::system::error_code&, std::size_t) {
                        if (self->abandoned) return;
                        boost::system::error_code ignored;
                        self->in.close(ignored);
                      });
  }

  void schedule_poll() {
    poll.expires_after(poll_interval);
    poll_interval = std::min(poll_interval * 2, kMaxPoll);
    poll.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->abandoned || self->finished) return;
      self->check_exit();
    });
  }

  void check_exit() {
    if (!exited) {
      int status = 0;
      pid_t r = 0;
      do r = ::waitpid(pid, &status, WNOHANG);
      while (r < 0 && errno == EINTR);
      if (r == pid) {
        exited = true;
        exit_time = Clock::now();
        if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
      } else if (r < 0) {
        exited = true;  // ECHILD: reaped by someone else; the status is lost
        exit_time = Clock::now();
      }
    }
    if (exited && (!out_eof || !err_eof) && Clock::now() - exit_time >= kPipeGrace) close_streams();
    finish_if_done();
    if (!finished) schedule_poll();
  }

  void on_deadline() {
    if (exited) return;
    result.timed_out = true;
    kill_child(pid, true);  // the child leads its own process group
    // Whatever the group wrote so far is kept; nothing more is waited for.
    close_streams();
    poll_interval = milliseconds{1};
    poll.cancel();
    schedule_poll();
  }
};

ProcessRunner::ProcessRunner(asio::io_context& io) : io_(io), registry_(std::make_shared<Registry>()) {}

ProcessRunner::~ProcessRunner() {
  for (const auto& c : registry_->live) {
    c->abandoned = true;
    if (!c->exited) {
      kill_child(c->pid, true);
      int status = 0;
      while (::waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    boost::system::error_code ignored;
    c->in.close(ignored);
    c->close_streams();
    c->poll.cancel();
    c->deadline.cancel();
  }
  registry_->live.clear();
}

std::size_t ProcessRunner::in_flight() const { return registry_->live.size(); }

void ProcessRunner::check_exits() {
  // A copy: a child that finishes leaves the registry.
  const std::vector<std::shared_ptr<Child>> children(registry_->live.begin(), registry_->live.end());
  for (const auto& c : children)
    if (!c->finished && !c->abandoned && !c->exited) c->check_exit();
}

void ProcessRunner::run(CommandSpec spec, std::function<void(CommandResult)> done) {
  auto child = std::make_shared<Child>(io_);
  child->done = std::move(done);
  child->registry = registry_;
  child->result.timeout = spec.timeout;
  child->result.program = spec.argv.empty() ? std::string() : spec.argv.front();
  child->start = Clock::now();

  auto fail = [&](std::string why) {
    child->result.spawn_error = std::move(why);
    asio::post(io_, [child] {
      auto cb = std::move(child->done);
      cb(std::move(child->result));
    });
  };
  SpawnSpec how;
  how.argv = spec.argv;
  how.env = spec.env;
  how.unset_env_prefixes = spec.unset_env_prefixes;
  how.in = SpawnSpec::Stream::Socket;
  how.parent_death_signal = spec.parent_death_signal;
  SpawnedChild started = spawn_process(how);
  if (started.pid < 0) return fail(std::move(started.error));

  const pid_t pid = started.pid;
  child->pid = pid;
  child->in.assign(asio::local::stream_protocol(), started.in);
  child->out.assign(started.out);
  child->err.assign(started.err);
  child->stdin_data = std::move(spec.stdin_data);
  registry_->live.insert(child);

  child->write_stdin();
  child->read(true);
  child->read(false);
  child->deadline.expires_after(spec.timeout);
  child->deadline.async_wait([child](const boost::system::error_code& ec) {
    if (ec || child->abandoned || child->finished) return;
    child->on_deadline();
  });
  child->schedule_poll();
}

}  // namespace vramsim::slurm
