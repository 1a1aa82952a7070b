// spawn_process and ProcessRunner: child processes for the head and the
// agent, on the Asio loop without blocking it.
#include "backends/slurm/process_runner.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "tests/support/proc_file.hpp"

namespace vramsim::slurm {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// Runs one command to completion on a fresh loop.
CommandResult run_one(CommandSpec spec) {
  asio::io_context io;
  ProcessRunner runner(io);
  std::optional<CommandResult> got;
  runner.run(std::move(spec), [&](CommandResult r) { got = std::move(r); });
  io.run();
  EXPECT_TRUE(got.has_value());
  EXPECT_EQ(runner.in_flight(), 0u);
  return got.value_or(CommandResult{});
}

CommandSpec sh(const std::string& script, std::chrono::milliseconds timeout = 10s) {
  CommandSpec s;
  s.argv = {"/bin/sh", "-c", script};
  s.timeout = timeout;
  return s;
}

// True when `pid` is neither running nor an unreaped zombie of ours.
bool gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// spawn_process in a forked helper process that then exits: the child's pid
// comes back through a pipe. The helper is reaped here; the child, once
// orphaned, is reparented and reaped by init (or the subreaper).
pid_t spawn_from_a_helper_that_exits(const SpawnSpec& spec) {
  int p[2];
  if (::pipe(p) != 0) return -1;
  const pid_t helper = ::fork();
  if (helper == 0) {
    ::close(p[0]);
    const SpawnedChild c = spawn_process(spec);
    const pid_t pid = c.pid;
    [[maybe_unused]] ssize_t n = ::write(p[1], &pid, sizeof pid);
    ::_exit(0);
  }
  ::close(p[1]);
  pid_t pid = -1;
  if (::read(p[0], &pid, sizeof pid) != static_cast<ssize_t>(sizeof pid)) pid = -1;
  ::close(p[0]);
  int status = 0;
  ::waitpid(helper, &status, 0);
  return pid;
}

// Gone, or a zombie waiting for its new parent to reap it.
bool dead_or_zombie(pid_t pid) {
  if (gone(pid)) return true;
  const std::string text = testing_support::read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = text.rfind(')');
  return paren == std::string::npos || (paren + 2 < text.size() && text[paren + 2] == 'Z');
}

bool dies_within(pid_t pid, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (dead_or_zombie(pid)) return true;
    std::this_thread::sleep_for(10ms);
  }
  return dead_or_zombie(pid);
}

TEST(SpawnProcess, ParentDeathSignalKillsTheChildWithItsParent) {
  SpawnSpec spec;
  spec.argv = {"sleep", "30"};
  spec.out = spec.err = SpawnSpec::Stream::Null;
  spec.parent_death_signal = SIGKILL;
  const pid_t with = spawn_from_a_helper_that_exits(spec);
  ASSERT_GT(with, 0);
  EXPECT_TRUE(dies_within(with, 5s)) << "child " << with << " outlived its parent";

  spec.parent_death_signal = 0;
  const pid_t without = spawn_from_a_helper_that_exits(spec);
  ASSERT_GT(without, 0);
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(dead_or_zombie(without)) << "without a parent-death signal the child lives on";
  ::kill(without, SIGKILL);
  EXPECT_TRUE(dies_within(without, 5s));
}

TEST(SpawnProcess, OwnProcessGroupOrOurs) {
  SpawnSpec spec;
  spec.argv = {"sleep", "30"};
  spec.out = spec.err = SpawnSpec::Stream::Null;
  for (bool own : {true, false}) {
    spec.own_process_group = own;
    const SpawnedChild c = spawn_process(spec);
    ASSERT_GT(c.pid, 0) << c.error;
    EXPECT_EQ(c.in, -1);
    EXPECT_EQ(c.out, -1);
    EXPECT_EQ(::getpgid(c.pid), own ? c.pid : ::getpgrp());
    kill_child(c.pid, own);
    int status = 0;
    ASSERT_EQ(::waitpid(c.pid, &status, 0), c.pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  }
}

TEST(SpawnProcess, PrefixesRemoveInheritedVariablesOnly) {
  setenv("VRAMSIM_PREFIX_TEST_A", "inherited", 1);
  setenv("VRAMSIM_KEEP_TEST", "kept", 1);
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo \"${VRAMSIM_PREFIX_TEST_A:-gone} ${VRAMSIM_PREFIX_TEST_B:-gone} $VRAMSIM_KEEP_TEST\""};
  spec.unset_env_prefixes = {"VRAMSIM_PREFIX_"};
  spec.env = {{"VRAMSIM_PREFIX_TEST_B", "given"}};  // set by the caller: kept
  const SpawnedChild c = spawn_process(spec);
  unsetenv("VRAMSIM_PREFIX_TEST_A");
  unsetenv("VRAMSIM_KEEP_TEST");
  ASSERT_GT(c.pid, 0) << c.error;
  std::string text;
  char buf[256];
  ssize_t n;
  while ((n = ::read(c.out, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  ::close(c.out);
  ::close(c.err);
  int status = 0;
  ASSERT_EQ(::waitpid(c.pid, &status, 0), c.pid);
  EXPECT_EQ(text, "gone given kept\n");
}

TEST(SpawnProcess, PipesEnvironmentAndAnExecFailure) {
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", "read x; echo \"$x $VRAMSIM_SPAWN_TEST ${HOME:-unset}\"; echo err >&2"};
  spec.in = SpawnSpec::Stream::Pipe;
  spec.env = {{"VRAMSIM_SPAWN_TEST", "set"}};
  spec.unset_env = {"HOME"};
  const SpawnedChild c = spawn_process(spec);
  ASSERT_GT(c.pid, 0) << c.error;
  ASSERT_EQ(::write(c.in, "hi\n", 3), 3);
  ::close(c.in);
  auto slurp = [](int fd) {
    std::string text;
    char buf[256];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return text;
  };
  EXPECT_EQ(slurp(c.out), "hi set unset\n");
  EXPECT_EQ(slurp(c.err), "err\n");
  int status = 0;
  ASSERT_EQ(::waitpid(c.pid, &status, 0), c.pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  // Executable, but not a program: the exec's error, not a child exiting 127.
  char tmpl[] = "/tmp/vramsim-spawn-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl, file = dir + "/not-a-program";
  { std::ofstream(file) << "\x7f" << "garbage"; }
  std::filesystem::permissions(file, std::filesystem::perms::owner_all);
  SpawnSpec bad;
  bad.argv = {file};
  const SpawnedChild b = spawn_process(bad);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(b.pid, -1);
  EXPECT_EQ(b.error, file + ": Exec format error");
  EXPECT_EQ(b.out, -1);
}

TEST(ProcessRunner, ExitCodeAndBothStreams) {
  const auto r = run_one(sh("echo out-line; echo err-line >&2; exit 3"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.signal, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.out, "out-line\n");
  EXPECT_EQ(r.err, "err-line\n");
  EXPECT_EQ(r.describe(), "/bin/sh: exit 3: err-line");
}

TEST(ProcessRunner, SuccessIsOk) {
  const auto r = run_one(sh("printf 'a\\nb'"));
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "a\nb");
}

TEST(ProcessRunner, StdinIsDeliveredAndClosed) {
  CommandSpec s;
  s.argv = {"cat"};
  s.stdin_data = "#!/bin/sh\nline two\n";
  const auto r = run_one(s);
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.out, s.stdin_data);
}

TEST(ProcessRunner, LargeStdinToAChildThatReadsNothingDoesNotKillUs) {
  // The child exits at once; writing 4 MiB must end in EPIPE, not SIGPIPE.
  auto s = sh("exit 0");
  s.stdin_data.assign(4 << 20, 'x');
  const auto r = run_one(s);
  EXPECT_TRUE(r.ok()) << r.describe();
}

TEST(ProcessRunner, EnvironmentIsInheritedAndExtended) {
  ::setenv("VRAMSIM_TEST_INHERITED", "kept", 1);
  auto s = sh("echo \"$VRAMSIM_TEST_INHERITED $VRAMSIM_TEST_ADDED\"");
  s.env = {{"VRAMSIM_TEST_ADDED", "added"}};
  const auto r = run_one(s);
  EXPECT_EQ(r.out, "kept added\n");
}

TEST(ProcessRunner, ProgramIsLookedUpOnTheChildsPath) {
  const auto dir = std::filesystem::temp_directory_path() / ("vramsim-pr-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "vramsim-fake-tool");
    f << "#!/bin/sh\necho fake \"$@\"\n";
  }
  std::filesystem::permissions(dir / "vramsim-fake-tool", std::filesystem::perms::owner_all);
  CommandSpec s;
  s.argv = {"vramsim-fake-tool", "x y"};
  s.env = {{"PATH", dir.string() + ":/usr/bin:/bin"}};
  const auto r = run_one(s);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.out, "fake x y\n");
}

TEST(ProcessRunner, MissingBinaryIsASpawnErrorReportedOnTheLoop) {
  asio::io_context io;
  ProcessRunner runner(io);
  bool called = false;
  CommandResult got;
  CommandSpec s;
  s.argv = {"vramsim-no-such-binary-anywhere"};
  runner.run(s, [&](CommandResult r) {
    called = true;
    got = std::move(r);
  });
  EXPECT_FALSE(called) << "the callback must not run inside run()";
  io.run();
  ASSERT_TRUE(called);
  EXPECT_FALSE(got.ok());
  EXPECT_EQ(got.describe(), "vramsim-no-such-binary-anywhere: could not start: not found on PATH");

  s.argv = {"/nonexistent/dir/tool"};
  runner.run(s, [&](CommandResult r) { got = std::move(r); });
  io.restart();
  io.run();
  EXPECT_EQ(got.spawn_error, "not an executable file");
}

TEST(ProcessRunner, TimeoutKillsTheWholeProcessGroup) {
  const auto pidfile = std::filesystem::temp_directory_path() / ("vramsim-pr-gc-" + std::to_string(::getpid()));
  // A grandchild that would outlive its parent and keep the pipes open.
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_one(sh("sleep 30 & echo $! > " + pidfile.string() + "; echo started; wait", 300ms));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.out, "started\n");
  EXPECT_EQ(r.describe(), "/bin/sh: timed out after 300ms");
  EXPECT_LT(took, 5s);
  std::ifstream f(pidfile);
  pid_t grandchild = 0;
  f >> grandchild;
  std::filesystem::remove(pidfile);
  ASSERT_GT(grandchild, 0);
  // The grandchild was re-parented away from us; SIGKILL is delivered at
  // once but init may take a moment to reap it.
  for (int i = 0; i < 100 && !gone(grandchild); ++i) {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string pid_s, comm, state;
    stat >> pid_s >> comm >> state;
    if (state == "Z" || !stat) break;
    std::this_thread::sleep_for(20ms);
  }
  std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
  std::string pid_s, comm, state;
  stat >> pid_s >> comm >> state;
  EXPECT_TRUE(!stat || state == "Z") << "grandchild " << grandchild << " still running, state " << state;
}

TEST(ProcessRunner, ExitWhileAGrandchildHoldsThePipesFinishesAfterTheGrace) {
  // The child exits at once; a background sleep keeps stdout open.
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_one(sh("sleep 3 & echo parent-done"));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.out, "parent-done\n");
  EXPECT_LT(took, 2500ms);
}

TEST(ProcessRunner, KilledBySignalIsReported) {
  const auto r = run_one(sh("kill -TERM $$"));
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(), "/bin/sh: killed by signal 15");
}

TEST(ProcessRunner, OutputIsCappedAndTheChildIsNotStalled) {
  // 3 MiB on stdout, 2 MiB on stderr: both capped at 1 MiB, the child still
  // runs to its end (it would block on a full pipe otherwise).
  const auto r = run_one(sh("head -c 3145728 /dev/zero; head -c 2097152 /dev/zero >&2; exit 7"));
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.out.size(), kOutputCap);
  EXPECT_EQ(r.err.size(), kOutputCap);
  EXPECT_TRUE(r.out_truncated);
  EXPECT_TRUE(r.err_truncated);
  const auto small = run_one(sh("echo hi"));
  EXPECT_FALSE(small.out_truncated);
}

TEST(ProcessRunner, ManyConcurrentChildrenAllReapedAndTheLoopStaysResponsive) {
  asio::io_context io;
  ProcessRunner runner(io);
  constexpr int kChildren = 64;
  std::vector<std::optional<CommandResult>> results(kChildren);
  std::vector<pid_t> pids;
  for (int i = 0; i < kChildren; ++i) {
    runner.run(sh("echo $$; sleep 0.3; exit " + std::to_string(i % 5)),
               [&, i](CommandResult r) { results[i] = std::move(r); });
  }
  EXPECT_EQ(runner.in_flight(), static_cast<std::size_t>(kChildren));
  // A timer on the same loop fires while every child still sleeps.
  asio::steady_timer tick(io);
  std::size_t in_flight_at_tick = 0;
  tick.expires_after(100ms);
  tick.async_wait([&](const boost::system::error_code&) { in_flight_at_tick = runner.in_flight(); });
  io.run();
  EXPECT_GT(in_flight_at_tick, 0u);
  EXPECT_EQ(runner.in_flight(), 0u);
  for (int i = 0; i < kChildren; ++i) {
    ASSERT_TRUE(results[i].has_value()) << i;
    EXPECT_EQ(results[i]->exit_code, i % 5) << i;
    pids.push_back(std::stoi(results[i]->out));
  }
  // No zombies: every child pid is gone, and we have no child left to wait for.
  for (pid_t p : pids) EXPECT_TRUE(gone(p)) << "pid " << p << " not reaped";
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(ProcessRunner, DestructorKillsAndReapsChildrenInFlight) {
  const auto pidfile = std::filesystem::temp_directory_path() / ("vramsim-pr-dtor-" + std::to_string(::getpid()));
  pid_t pid = 0;
  {
    asio::io_context io;
    ProcessRunner runner(io);
    bool called = false;
    runner.run(sh("echo $$ > " + pidfile.string() + ".tmp; mv " + pidfile.string() + ".tmp " + pidfile.string() +
                  "; sleep 30"),
               [&](CommandResult) { called = true; });
    // Run the loop until the child has written its pid (at most 10 s).
    asio::steady_timer t(io);
    int waited = 0;
    std::function<void()> check = [&] {
      if (std::filesystem::exists(pidfile) || ++waited > 500) return io.stop();
      t.expires_after(20ms);
      t.async_wait([&](const boost::system::error_code&) { check(); });
    };
    check();
    io.run();
    EXPECT_FALSE(called);
    EXPECT_EQ(runner.in_flight(), 1u);
    std::ifstream(pidfile) >> pid;
  }
  std::filesystem::remove(pidfile);
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(gone(pid)) << "child " << pid << " left running or unreaped";
}

}  // namespace
}  // namespace vramsim::slurm
