// vramsim live against the loopback SLURM of slurm-harness.sh: the real
// sbatch/squeue/scancel, real vramsim-agent processes started by the worker
// jobs, the head's agent channel. Each test runs the vramsim binary as a
// child process, as a user would, and reads its trace.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runner/simulation.hpp"
#include "analysis/explain.hpp"
#include "analysis/trace_diff.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace vramsim;

namespace {

const std::string kScenarios = std::string(VRAMSIM_SOURCE_DIR) + "/tests/live/scenarios/";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// From the head's first log line, the part from "agents on" on.
std::string port_line(const std::string& log) {
  const auto at = log.find("agents on ");
  return at == std::string::npos ? "" : log.substr(at);
}

// The harness's SLURM for this process and its children.
class LiveHead : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* d = std::getenv("VRAMSIM_SLURM_HARNESS");
    if (!d || !fs::exists(std::string(d) + "/etc/slurm.conf"))
      GTEST_FAIL() << "no SLURM harness: run through ctest (fixture `slurm`) or set VRAMSIM_SLURM_HARNESS";
    harness_ = d;
    setenv("SLURM_CONF", (harness_ + "/etc/slurm.conf").c_str(), 1);
    const std::string path = harness_ + "/bin:" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
    setenv("PATH", path.c_str(), 1);
    work_ = (fs::temp_directory_path() / ("vramsim-live-" + std::to_string(getpid()) + "-" +
                                          ::testing::UnitTest::GetInstance()->current_test_info()->name())).string();
    fs::remove_all(work_);
    fs::create_directories(work_);
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
  static std::vector<TraceEvent> of(const std::vector<TraceEvent>& ev, const std::string& kind) {
    std::vector<TraceEvent> out;
    for (const auto& e : ev) if (e.kind == kind) out.push_back(e);
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

  std::string harness_, work_;
};

// 1. The reference cold start, live under fixed: admitted on capacity in
// flight, one GPU job, VRAM_MB 40960 advertised by the agent, 8000 MB booked
// (32960 left), RUNNING, a probe call answered, stop/delete/shutdown, squeue
// empty; and the same event kinds in the same order as the simulated run.
TEST_F(LiveHead, ColdStartFixedRunsLiveAsInSimulation) {
  const std::string run_id = "t1-" + std::to_string(getpid());
  // A job of the run that no sbatch of the head answered with, as an sbatch
  // whose answer was lost leaves it: the head cancels it at its first squeue.
  ASSERT_EQ(run({"/bin/sh", "-c", "sbatch --parsable --cpus-per-task=1 --mem-per-cpu=1G --job-name=lost "
                                  "--comment=" + run_id + "#99 --output=/dev/null --wrap 'sleep 300'"},
                "lost"), 0)
      << slurp(work_ + "/lost.err");
  std::string lost = slurp(work_ + "/lost.out");
  lost = lost.substr(0, lost.find_first_of(";\n"));
  ASSERT_EQ(run(live_args("cold-start-live.json", "fixed", run_id), "head"), 0)
      << slurp(work_ + "/head.out") << slurp(work_ + "/head.err");
  const auto live = read_trace(work_ + "/" + run_id + "/trace.jsonl");
  const auto orphans = of(live, "job_orphan_cancelled");
  ASSERT_EQ(orphans.size(), 1u);
  EXPECT_EQ(orphans[0]["job"], lost);
  for (const auto& e : of(live, "job_submitted")) EXPECT_NE(e["job"], lost);
  const auto adm = of(live, "admission");
  ASSERT_EQ(adm.size(), 1u);
  EXPECT_EQ(adm[0]["admitted"], true);
  EXPECT_EQ(adm[0]["reason"], "capacity_in_flight");
  const auto ups = of(live, "scale_up");
  ASSERT_EQ(ups.size(), 1u);
  EXPECT_EQ(ups[0]["gpus"], 1);
  const auto adv = of(live, "node_advertised");
  ASSERT_EQ(adv.size(), 1u);
  EXPECT_EQ(adv[0]["resources"]["VRAM_MB"], 40960.0) << "from the stand-in nvidia-smi, through the models' advertisement";
  EXPECT_NE(adv[0]["script_resources"].get<std::string>().find("\"VRAM_MB\": 40960"), std::string::npos)
      << "the sbatch script's own detection agrees: " << adv[0]["script_resources"];
  const auto placed = of(live, "replica_placed");
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0]["node_vram_available_mb"], 32960);
  const auto results = of(live, "call_result");
  ASSERT_EQ(results.size(), 1u);
  const Json& r = results[0]["result"];
  // Without a GPU the probe says so; with one it reports a measurement.
  EXPECT_TRUE((r.contains("error") && r["error"].get<std::string>().find("CUDA") != std::string::npos) ||
              r.contains("matmul_tflops"))
      << r;
  const auto done = of(live, "shutdown_done");
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0]["jobs_left"].empty());
  EXPECT_TRUE(queued(run_id).empty());
  // explain reads the live trace as it reads a simulated one: the whole path
  // from the deploy through the scale-up and the job to RUNNING.
  const Explanation x = explain_trace(live, "probe");
  ASSERT_TRUE(x.apps.at(0).path.has_value());
  std::vector<std::string> path_kinds;
  for (const auto& s : x.apps[0].path->steps) path_kinds.push_back(s.kind);
  EXPECT_EQ(path_kinds.front(), "deploy_requested");
  EXPECT_NE(std::find(path_kinds.begin(), path_kinds.end(), "scale_up"), path_kinds.end());
  EXPECT_EQ(path_kinds.back(), "app_state");

  // The simulated run of the same file: same kinds, same order.
  Scenario sc = load_scenario(kScenarios + "cold-start-live.json");
  RunOptions opt;
  opt.policies = "fixed";
  opt.trace_path = work_ + "/sim.jsonl";
  run_scenario(sc, opt);
  const auto sim = read_trace(opt.trace_path);
  const TraceDiff d = diff_traces(sim, live);
  std::ostringstream table;
  print_trace_diff(d, "simulated", "live", table);
  EXPECT_FALSE(d.divergence.has_value()) << table.str();
  std::cout << table.str();
}

// 2. The same under legacy: rejected at admission, as in simulation.
TEST_F(LiveHead, ColdStartLegacyIsRejectedAsInSimulation) {
  const std::string run_id = "t2-" + std::to_string(getpid());
  EXPECT_EQ(run(live_args("cold-start-live.json", "legacy", run_id), "head"), 1) << slurp(work_ + "/head.err");
  const auto live = read_trace(work_ + "/" + run_id + "/trace.jsonl");
  const auto adm = of(live, "admission");
  ASSERT_EQ(adm.size(), 1u);
  EXPECT_EQ(adm[0]["admitted"], false);
  EXPECT_EQ(adm[0]["worker_jobs"], 1);
  EXPECT_NE(adm[0]["message"].get<std::string>().find("Insufficient resources for application 'probe'"), std::string::npos);
  const Explanation x = explain_trace(live, "probe");
  ASSERT_FALSE(x.apps.at(0).causes.empty());
  EXPECT_EQ(x.apps[0].causes[0].code, "admission_counts_in_flight");
  // Whatever legacy left behind goes with the run's cleanup.
  EXPECT_EQ(run({VRAMSIM_BINARY, "live", "--cleanup", run_id, "--journal", work_ + "/" + run_id + "/journal"}, "cleanup"), 0)
      << slurp(work_ + "/cleanup.out");
  EXPECT_TRUE(queued(run_id).empty());
}

// 3. Shutdown while the worker job is PENDING behind another job on the one
// GPU: fixed leaves squeue empty, legacy leaves the job.
TEST_F(LiveHead, ShutdownWithAPendingJobFixedCancelsLegacyLeavesIt) {
  ASSERT_EQ(run({"/bin/sh", "-c", "sbatch --parsable --gpus=1 --cpus-per-task=1 --mem-per-cpu=1G --job-name=blocker "
                                  "--comment=blocker --output=/dev/null --wrap 'sleep 300'"},
                "blocker"), 0)
      << slurp(work_ + "/blocker.err");
  const std::string blocker = slurp(work_ + "/blocker.out");
  for (const std::string policies : {"fixed", "legacy"}) {
    const std::string run_id = "t3" + policies + "-" + std::to_string(getpid());
    run(live_args("shutdown-pending-live.json", policies, run_id), "head-" + policies);
    const auto live = read_trace(work_ + "/" + run_id + "/trace.jsonl");
    ASSERT_EQ(of(live, "job_submitted").size(), 1u) << policies;
    EXPECT_TRUE(of(live, "job_started").empty()) << policies << ": the worker job never left PENDING";
    if (policies == "fixed") {
      EXPECT_TRUE(queued(run_id).empty());
    } else {
      EXPECT_EQ(queued(run_id).size(), 1u) << "legacy returns at once with no node registered";
      EXPECT_EQ(run({VRAMSIM_BINARY, "live", "--cleanup", run_id}, "cleanup"), 0) << slurp(work_ + "/cleanup.out");
      EXPECT_TRUE(queued(run_id).empty());
    }
  }
  run({"/bin/sh", "-c", "scancel " + blocker}, "scancel");
}

// 4. The head killed with SIGKILL mid-run; `vramsim live --cleanup` cancels
// what it left, found by comment and journal.
TEST_F(LiveHead, KilledHeadIsCleanedUpByRunId) {
  const std::string run_id = "t4-" + std::to_string(getpid());
  const Child head = spawn(live_args("cold-start-live.json", "fixed", run_id), "head");
  const std::string journal = work_ + "/" + run_id + "/journal";
  ASSERT_TRUE(wait_for(journal, [&](const std::string& t) { return t.find(run_id) != std::string::npos; }, 60s))
      << slurp(head.err);
  ASSERT_TRUE(wait_for(work_ + "/" + run_id + "/trace.jsonl",
                       [](const std::string& t) { return t.find("\"job_started\"") != std::string::npos; }, 60s));
  kill(head.pid, SIGKILL);
  wait(head, 10s);
  ASSERT_EQ(queued(run_id).size(), 1u) << "the job outlives its head";
  EXPECT_EQ(run({VRAMSIM_BINARY, "live", "--cleanup", run_id, "--journal", journal}, "cleanup"), 0)
      << slurp(work_ + "/cleanup.out");
  const std::string report = slurp(work_ + "/cleanup.out");
  EXPECT_NE(report.find("cancelled"), std::string::npos) << report;
  EXPECT_TRUE(queued(run_id).empty());
}

// 5. An agent killed mid-run: node lost, replica pending again, a new job,
// the app RUNNING again.
TEST_F(LiveHead, KilledAgentsNodeIsLostAndTheAppRecovers) {
  const std::string run_id = "t5-" + std::to_string(getpid());
  const Child head = spawn(live_args("agent-lost-live.json", "fixed", run_id), "head");
  const std::string trace = work_ + "/" + run_id + "/trace.jsonl";
  ASSERT_TRUE(wait_for(trace, [](const std::string& t) { return t.find("\"to\":\"RUNNING\"") != std::string::npos; }, 60s))
      << slurp(head.err);
  const auto before = read_trace(trace);
  const auto adv = of(before, "node_advertised");
  ASSERT_EQ(adv.size(), 1u);
  const int agent = adv[0]["agent_pid"].get<int>();
  ASSERT_GT(agent, 1);
  ASSERT_EQ(kill(agent, SIGKILL), 0);
  EXPECT_EQ(wait(head, 90s), 0) << slurp(head.err);
  const auto ev = read_trace(trace);
  ASSERT_GE(of(ev, "node_lost").size(), 1u);
  EXPECT_EQ(of(ev, "node_lost")[0]["reason"], "connection closed");
  EXPECT_GE(of(ev, "replica_lost").size(), 1u);
  EXPECT_EQ(of(ev, "job_submitted").size(), 2u) << "a new worker job for the pending replica";
  int running = 0;
  for (const auto& e : of(ev, "app_state")) running += e["to"] == "RUNNING";
  EXPECT_EQ(running, 2) << "RUNNING, lost, RUNNING again";
  EXPECT_TRUE(queued(run_id).empty());
}

// 6. Forged, oversized and wrongly signed agent messages are refused; the
// head keeps serving, its status listener answers, and the run completes.
TEST_F(LiveHead, ForgedAgentMessagesAreRefusedAndTheRunCompletes) {
  const std::string run_id = "t6-" + std::to_string(getpid());
  auto args = live_args("cold-start-live.json", "fixed", run_id);
  args.insert(args.end(), {"--status-port", "0"});
  const Child head = spawn(args, "head");
  int agent_port = 0, status_port = 0;
  ASSERT_TRUE(wait_for(head.err, [&](const std::string& t) {
    return std::sscanf(port_line(t).c_str(), "agents on 127.0.0.1:%d, status on 127.0.0.1:%d", &agent_port,
                       &status_port) == 2;
  }, 30s)) << slurp(head.err);
  auto send = [&](const std::string& bytes) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<unsigned short>(agent_port));
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    char buf[4096];
    (void)!read(fd, buf, sizeof buf);  // the challenge
    (void)!write(fd, bytes.data(), bytes.size());
    std::this_thread::sleep_for(200ms);
    close(fd);
  };
  send("this is not json\n");
  send(std::string(200000, 'x') + "\n");
  send("{\"type\":\"hello\",\"job_id\":\"1\",\"run_id\":\"" + run_id + "\",\"hmac\":\"" + std::string(64, '0') + "\"}\n");
  const int status = run({VRAMSIM_BINARY, "status", "--live", "127.0.0.1:" + std::to_string(status_port)}, "status", 20s);
  EXPECT_EQ(status, 0) << slurp(work_ + "/status.err");
  EXPECT_NE(slurp(work_ + "/status.out").find("status at "), std::string::npos) << slurp(work_ + "/status.out");
  EXPECT_NE(slurp(work_ + "/status.out").find("(live " + run_id + ")"), std::string::npos) << slurp(work_ + "/status.out");
  EXPECT_EQ(wait(head, 90s), 0) << slurp(head.err);
  const auto ev = read_trace(work_ + "/" + run_id + "/trace.jsonl");
  EXPECT_GE(of(ev, "agent_refused").size(), 3u);
  int running = 0;
  for (const auto& e : of(ev, "app_state")) running += e["to"] == "RUNNING";
  EXPECT_EQ(running, 1) << "the real agent still registered and the app ran";
  EXPECT_TRUE(queued(run_id).empty());
}

}  // namespace

namespace {

// SIGTERM once: the scenario's shutdown path, then a normal end with nothing
// left in squeue. SIGINT twice: abort after cancelling the run's jobs.
TEST_F(LiveHead, OneSignalShutsDownTwoSignalsAbortAfterCancelling) {
  {
    const std::string run_id = "t7a-" + std::to_string(getpid());
    const Child head = spawn(live_args("cold-start-live.json", "fixed", run_id), "head-term");
    const std::string trace = work_ + "/" + run_id + "/trace.jsonl";
    ASSERT_TRUE(wait_for(trace, [](const std::string& t) { return t.find("\"replica_placed\"") != std::string::npos; }, 60s))
        << slurp(head.err);
    kill(head.pid, SIGTERM);
    // Cut short before RUNNING: the scenario's expectations fail (exit 1),
    // and the shutdown path still leaves nothing behind.
    EXPECT_EQ(wait(head, 60s), 1) << slurp(head.err);
    const auto ev = read_trace(trace);
    ASSERT_EQ(of(ev, "signal").size(), 1u);
    EXPECT_EQ(of(ev, "signal")[0]["signal"], "SIGTERM");
    ASSERT_EQ(of(ev, "shutdown_done").size(), 1u);
    EXPECT_TRUE(queued(run_id).empty());
  }
  {
    const std::string run_id = "t7b-" + std::to_string(getpid());
    const Child head = spawn(live_args("cold-start-live.json", "fixed", run_id), "head-int");
    const std::string trace = work_ + "/" + run_id + "/trace.jsonl";
    ASSERT_TRUE(wait_for(trace, [](const std::string& t) { return t.find("\"job_started\"") != std::string::npos; }, 60s))
        << slurp(head.err);
    kill(head.pid, SIGINT);
    std::this_thread::sleep_for(20ms);
    kill(head.pid, SIGINT);
    EXPECT_EQ(wait(head, 60s), 130) << slurp(head.err);
    EXPECT_NE(slurp(head.err).find("aborted"), std::string::npos) << slurp(head.err);
    // scancel went out; the job leaves the queue shortly after.
    bool gone = false;
    for (int i = 0; i < 50 && !gone; ++i) {
      gone = queued(run_id).empty();
      if (!gone) std::this_thread::sleep_for(200ms);
    }
    EXPECT_TRUE(gone);
  }
}

// A controller that does not answer: one clear line, exit 5, bounded time.
TEST_F(LiveHead, UnreachableControllerIsOneLineAndExitFive) {
  std::ifstream in(harness_ + "/etc/slurm.conf");
  std::ofstream conf(work_ + "/dead.conf");
  std::string line;
  while (std::getline(in, line)) conf << (line.rfind("SlurmctldPort=", 0) == 0 ? "SlurmctldPort=1" : line) << "\n";
  conf.close();
  setenv("SLURM_CONF", (work_ + "/dead.conf").c_str(), 1);
  auto args = live_args("cold-start-live.json", "fixed", "t8-" + std::to_string(getpid()));
  const int code = run(args, "head", 150s);
  setenv("SLURM_CONF", (harness_ + "/etc/slurm.conf").c_str(), 1);
  EXPECT_EQ(code, 5) << slurp(work_ + "/head.err");
  const std::string err = slurp(work_ + "/head.err");
  EXPECT_NE(err.find("slurm controller unreachable"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "one line: " << err;
}

}  // namespace
