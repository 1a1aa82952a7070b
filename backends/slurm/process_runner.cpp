#include "backends/slurm/process_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
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

std::string format_duration(milliseconds d) {
  if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + " s";
  return std::to_string(d.count()) + " ms";
}

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

std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [k, v] : extra) replaced = replaced || k == key;
    if (!replaced) env.push_back(entry);
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

std::string CommandResult::describe() const {
  const std::string who = (program.empty() ? std::string("command") : program) + ": ";
  if (!spawn_error.empty()) return who + "could not start: " + spawn_error;
  if (timed_out) return who + "timed out after " + format_duration(timeout);
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
    ::kill(-pid, SIGKILL);  // the child leads its own process group
    ::kill(pid, SIGKILL);   // in case it left that group
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
      ::kill(-c->pid, SIGKILL);
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
  if (spec.argv.empty()) return fail("empty command");

  const std::vector<std::string> env = child_environment(spec.env);
  std::string path;
  for (const auto& e : env)
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  const std::string exe = resolve(spec.argv.front(), path);
  if (exe.empty())
    return fail(spec.argv.front().find('/') != std::string::npos ? "not an executable file"
                                                                : "not found on PATH");

  int in_sv[2] = {-1, -1}, out_p[2] = {-1, -1}, err_p[2] = {-1, -1};
  auto close_all = [&] {
    for (int* fd : {&in_sv[0], &in_sv[1], &out_p[0], &out_p[1], &err_p[0], &err_p[1]}) close_fd(*fd);
  };
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_sv) != 0 || ::pipe2(out_p, O_CLOEXEC) != 0 ||
      ::pipe2(err_p, O_CLOEXEC) != 0) {
    const int e = errno;
    close_all();
    return fail("could not create pipes: " + errno_text(e));
  }

  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&fa, in_sv[1], 0);
  posix_spawn_file_actions_adddup2(&fa, out_p[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_p[1], 2);
  // Own process group (a timeout kills all of it), no blocked signals, and
  // default dispositions for the signals a loop or a server may have set.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2})
    sigaddset(&defaults, s);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);

  std::vector<char*> argv_c, env_c;
  for (const auto& a : spec.argv) argv_c.push_back(const_cast<char*>(a.c_str()));
  argv_c.push_back(nullptr);
  for (const auto& e : env) env_c.push_back(const_cast<char*>(e.c_str()));
  env_c.push_back(nullptr);

  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, exe.c_str(), &fa, &attr, argv_c.data(), env_c.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close_fd(in_sv[1]);
  close_fd(out_p[1]);
  close_fd(err_p[1]);
  if (rc != 0) {
    close_all();
    return fail(exe + ": " + errno_text(rc));
  }

  child->pid = pid;
  child->in.assign(asio::local::stream_protocol(), in_sv[0]);
  child->out.assign(out_p[0]);
  child->err.assign(err_p[0]);
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
