#pragma once
// What the tests of `vramsim live` share: a harness SLURM in the process's
// environment, a work folder per test, the vramsim binary run as a child
// process as a user runs it, and the reading of its trace.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/trace.hpp"
#include "analysis/trace_diff.hpp"
#include "runner/simulation.hpp"

namespace vramsim::live_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

inline const std::string kScenarios = std::string(VRAMSIM_SOURCE_DIR) + "/tests/live/scenarios/";

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// How many times `what` occurs in `text` (events of one kind in a trace).
inline std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// From the head's first log line, the part from "agents on" on.
inline std::string port_line(const std::string& log) {
  const auto at = log.find("agents on ");
  return at == std::string::npos ? "" : log.substr(at);
}

// A harness's SLURM for this process and its children, and a work folder
// of the test's own. `env_var` names the harness folder; false (with a
// failure recorded) when there is none.
class LiveRunFixture : public ::testing::Test {
 protected:
  bool use_harness(const char* env_var, const char* fixture) {
    const char* d = std::getenv(env_var);
    if (!d || !fs::exists(std::string(d) + "/etc/slurm.conf")) {
      ADD_FAILURE() << "no SLURM harness: run through ctest (fixture `" << fixture << "`) or set " << env_var;
      return false;
    }
    harness_ = d;
    setenv("SLURM_CONF", (harness_ + "/etc/slurm.conf").c_str(), 1);
    const std::string path = harness_ + "/bin:" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
    setenv("PATH", path.c_str(), 1);
    // A folder of this test's own, made with mkdtemp: no other test or
    // checkout can be handed the same one, whatever runs beside it.
    std::string tmpl = (fs::temp_directory_path() /
                        ("vramsim-live-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                         "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      ADD_FAILURE() << "cannot make a work folder from " << tmpl;
      return false;
    }
    work_ = tmpl;
    return true;
  }
  // A passing test leaves nothing; a failing one leaves its folder to read.
  void TearDown() override {
    if (!work_.empty() && !HasFailure()) {
      std::error_code ignored;
      fs::remove_all(work_, ignored);
    }
  }

  struct Child {
    pid_t pid = -1;
    std::string out, err;
  };
  // Starts argv with stdout and stderr in files of the work folder.
  Child spawn(const std::vector<std::string>& argv, const std::string& tag) {
    Child c;
    c.out = work_ + "/" + tag + ".out";
    c.err = work_ + "/" + tag + ".err";
    c.pid = fork();
    if (c.pid == 0) {
      int o = ::open(c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = ::open(c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(o, 1);
      dup2(e, 2);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    return c;
  }
  // Waits for the child; -1 when it outlived `limit` (then it is killed).
  int wait(const Child& c, std::chrono::seconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < end) {
      if (waitpid(c.pid, &status, WNOHANG) == c.pid)
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      std::this_thread::sleep_for(50ms);
    }
    kill(c.pid, SIGKILL);
    waitpid(c.pid, &status, 0);
    return -1;
  }
  int run(const std::vector<std::string>& argv, const std::string& tag, std::chrono::seconds limit = 120s) {
    return wait(spawn(argv, tag), limit);
  }
  std::vector<std::string> live_args(const std::string& scenario, const std::string& policies, const std::string& run_id) {
    return {VRAMSIM_BINARY, "live", kScenarios + scenario, "--policies", policies, "--time-scale", "0.05",
            "--emulate-boot", "--run-id", run_id, "--workdir", work_ + "/" + run_id, "--agent", VRAMSIM_AGENT_BINARY};
  }
  // Job ids squeue lists with this run's comment.
  std::vector<std::string> queued(const std::string& run_id) {
    const int code = run({"/bin/sh", "-c", "squeue --noheader --format='%i %k'"}, "squeue", 30s);
    EXPECT_EQ(code, 0) << slurp(work_ + "/squeue.err");
    std::vector<std::string> ids;
    std::istringstream in(slurp(work_ + "/squeue.out"));
    std::string id, comment;
    while (in >> id >> comment)
      if (comment == run_id || comment.rfind(run_id + "#", 0) == 0) ids.push_back(id);
    return ids;
  }
  // Whether squeue stops listing the run's jobs within `limit`: a job the
  // head cancelled as it shut down stays COMPLETING a while on a loaded
  // machine.
  bool queue_drains(const std::string& run_id, std::chrono::seconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!queued(run_id).empty()) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return true;
  }
  static std::vector<TraceEvent> of(const std::vector<TraceEvent>& ev, const std::string& kind) {
    std::vector<TraceEvent> out;
    const TraceKind k = trace_kind_named(kind).value();
    for (const auto& e : ev) if (e.kind == k) out.push_back(e);
    return out;
  }
  // Polls a file until `pred` holds on its text, or the limit passes.
  bool wait_for(const std::string& path, const std::function<bool(const std::string&)>& pred, std::chrono::seconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if (fs::exists(path) && pred(slurp(path))) return true;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }

  // A copy of `scenario` in the work folder whose only action is a shutdown
  // at `at` (horizon `horizon`): time for what a test does mid-run; a test
  // that waits on events ends the run with a signal once they are in its
  // trace, so that a loaded machine cannot make the set shutdown come first.
  std::string shutdown_at(const std::string& scenario, const std::string& at, const std::string& horizon,
                          const std::string& name) {
    Json sc = Json::parse(slurp(kScenarios + scenario));
    sc["actions"] = Json::array({Json{{"at", at}, {"do", "shutdown"}}});
    sc["horizon"] = horizon;
    const std::string file = work_ + "/" + name;
    std::ofstream(file) << sc.dump(2);
    return file;
  }

  // The trace of `vramsim run` of the same scenario file under `policies`.
  std::vector<TraceEvent> simulated(const std::string& scenario, const std::string& policies) {
    Scenario sc = load_scenario(kScenarios + scenario);
    RunOptions opt;
    opt.policies = policies;
    opt.outputs.trace_path = work_ + "/sim.jsonl";
    run_scenario(sc, opt);
    return read_trace(opt.outputs.trace_path);
  }

  std::string harness_, work_;
};

// The loopback harness named by VRAMSIM_SLURM_HARNESS (fixture `slurm` or
// `slurm_b`: the head tests are split over two, so that they run beside
// each other).
class LiveHead : public LiveRunFixture {
 protected:
  void SetUp() override {
    ASSERT_TRUE(use_harness("VRAMSIM_SLURM_HARNESS", "slurm` or `slurm_b"));
  }
};

// A 3-node harness (slurm-harness.sh start DIR --nodes 3) named by
// VRAMSIM_MULTINODE_HARNESS; skipped, with the harness's one line, where
// network namespaces cannot be made.
class MultiNode : public LiveRunFixture {
 protected:
  void SetUp() override {
    const char* d = std::getenv("VRAMSIM_MULTINODE_HARNESS");
    if (d != nullptr && fs::exists(std::string(d) + "/unavailable"))
      GTEST_SKIP() << slurp(std::string(d) + "/unavailable");
    ASSERT_TRUE(use_harness("VRAMSIM_MULTINODE_HARNESS", "multinode"));
    head_addr_ = slurp(harness_ + "/etc/head-address");
    while (!head_addr_.empty() && head_addr_.back() == '\n') head_addr_.pop_back();
  }
  // The head on the root namespace, with the default addresses: agents dial
  // this host's name, which each node resolves to the bridge address.
  std::vector<std::string> args(const std::string& scenario, const std::string& run_id,
                                std::vector<std::string> extra = {}) {
    auto a = live_args(scenario, "fixed", run_id);
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  std::string head_addr_;
};

}  // namespace vramsim::live_test
