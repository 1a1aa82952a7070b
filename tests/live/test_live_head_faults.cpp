// vramsim live against the loopback SLURM of slurm-harness.sh, through what
// goes wrong: an agent killed, forged agent messages, signals to the head, a
// controller that does not answer. The same harness as test_live_head.cpp,
// in a folder of its own (fixture `slurm_b`), so the two run beside each
// other.
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
#include "tests/live/live_run_fixture.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace vramsim;

namespace {

using namespace vramsim::live_test;

// 5. An agent killed mid-run: node lost, replica pending again, a new job,
// the app RUNNING again. The run is stopped by a signal once the app runs
// again, not at the scenario's set 400 s (20 s of wall time): on a loaded
// machine the first start and the recovery together can take longer.
TEST_F(LiveHead, KilledAgentsNodeIsLostAndTheAppRecovers) {
  const std::string run_id = "t5-" + std::to_string(getpid());
  auto args = live_args("agent-lost-live.json", "fixed", run_id);
  args[2] = shutdown_at("agent-lost-live.json", "6000s", "6h", "recover.json");  // 300 s of wall time
  const Child head = spawn(args, "head");
  const std::string trace = work_ + "/" + run_id + "/trace.jsonl";
  const std::string running_again = "\"to\":\"RUNNING\"";
  ASSERT_TRUE(wait_for(trace, [&](const std::string& t) { return occurrences(t, running_again) >= 1; }, 90s))
      << slurp(head.err);
  const auto before = read_trace(trace);
  const auto adv = of(before, "node_advertised");
  ASSERT_EQ(adv.size(), 1u);
  const int agent = adv[0]["agent_pid"].get<int>();
  ASSERT_GT(agent, 1);
  ASSERT_EQ(kill(agent, SIGKILL), 0);
  const bool recovered =
      wait_for(trace, [&](const std::string& t) { return occurrences(t, running_again) >= 2; }, 120s);
  kill(head.pid, SIGTERM);
  EXPECT_EQ(wait(head, 90s), 0) << slurp(head.err);
  EXPECT_TRUE(recovered) << slurp(head.err);
  const auto ev = read_trace(trace);
  ASSERT_GE(of(ev, "node_lost").size(), 1u);
  EXPECT_EQ(of(ev, "node_lost")[0]["reason"], "connection closed");
  // The lost agent's job is cancelled, not left holding its allocation.
  const auto cancels = of(ev, "job_cancel_requested");
  ASSERT_GE(cancels.size(), 1u);
  EXPECT_EQ(cancels[0]["job"], adv[0]["job"]);
  EXPECT_EQ(cancels[0]["reason"], "agent lost: connection closed");
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
    return std::sscanf(port_line(t).c_str(), "agents on 0.0.0.0:%d dialling %*[^,], status on 127.0.0.1:%d",
                       &agent_port, &status_port) == 2;
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
    // The second once the first is taken: two SIGINTs pending at once are
    // one to the kernel (a loaded machine may not run the head in between).
    EXPECT_TRUE(wait_for(head.err, [](const std::string& t) { return t.find("SIGINT: shutting down") != std::string::npos; },
                         30s))
        << slurp(head.err);
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
