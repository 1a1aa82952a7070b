// vramsim live on a 3-node harness of its own, through what goes wrong on a
// cluster: the controller stopped and started again, a node cut off. These
// disturb the whole cluster, so they do not share one with the tests of
// test_multinode.cpp (and run beside them).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/live/live_run_fixture.hpp"

using namespace vramsim;
using namespace vramsim::live_test;

namespace {

// 6. The controller stopped for 60 s of wall time from the start of the run,
// then started again with its saved state: the head waits the outage out
// (held sbatch, no exit), records it, and completes the run; no job is
// submitted twice and nothing of the run is left.
TEST_F(MultiNode, AControllerOutageIsWaitedOutAndNothingIsSubmittedTwice) {
  const std::string run_id = "mn6-" + std::to_string(getpid());
  auto a = args("cold-start-live.json", run_id);
  a[std::find(a.begin(), a.end(), "--time-scale") - a.begin() + 1] = "0.2";
  const auto head = spawn(a, "head");
  const std::string trace = work_ + "/" + run_id + "/trace.jsonl";
  ASSERT_TRUE(wait_for(trace, [](const std::string& t) { return t.find("\"run_started\"") != std::string::npos; },
                       60s));
  const std::string harness = VRAMSIM_SLURM_HARNESS_SCRIPT;
  ASSERT_EQ(run({harness, "ctld-stop", harness_}, "ctld-stop", 60s), 0) << slurp(work_ + "/ctld-stop.err");
  std::this_thread::sleep_for(60s);
  ASSERT_EQ(run({harness, "ctld-start", harness_}, "ctld-start", 90s), 0) << slurp(work_ + "/ctld-start.err");
  const int code = wait(head, 240s);
  EXPECT_TRUE(code == 0 || code == 1) << code << slurp(head.err);
  const auto live = read_trace(trace);
  const auto outage = of(live, "slurm_outage");
  ASSERT_EQ(outage.size(), 2u) << slurp(head.err);
  EXPECT_EQ(outage[0]["phase"], "started");
  EXPECT_EQ(outage[1]["phase"], "ended");
  EXPECT_GT(outage[1]["wall_s"].get<double>(), 20.0);
  std::set<std::string> jobs;
  for (const auto& e : of(live, "job_submitted")) EXPECT_TRUE(jobs.insert(e["job"].get<std::string>()).second);
  EXPECT_FALSE(jobs.empty()) << "the held scale-up went out once the controller answered";
  EXPECT_TRUE(of(live, "job_orphan_cancelled").empty()) << "no sbatch was sent blind";
  ASSERT_EQ(of(live, "shutdown_done").size(), 1u);
  EXPECT_TRUE(queued(run_id).empty());
}

// 7. A node cut off (its slurmd killed, its link down) under a running
// worker: SLURM marks the node down and the job NODE_FAIL, the trace says so
// (FAILED, slurm_state NODE_FAIL), the node is lost, a new job starts on
// another node and the app runs again; the cut-off agent, hearing nothing
// from its head, stops by itself. The run is stopped by a signal once the app
// runs again, not at a set time: on a loaded machine SLURM can take half a
// minute of wall time to mark the node down, and a set shutdown came first.
TEST_F(MultiNode, ANodeCutOffIsNodeFailAndTheWorkerMovesElsewhere) {
  const std::string run_id = "mn7-" + std::to_string(getpid());
  auto a = args("agent-lost-live.json", run_id, {"--agent-timeout", "60"});
  a[2] = shutdown_at("agent-lost-live.json", "6000s", "6h", "cut.json");  // 300 s of wall time at 0.05
  const auto head = spawn(a, "head");
  const std::string trace = work_ + "/" + run_id + "/trace.jsonl";
  const std::string running_again = "\"to\":\"RUNNING\"";
  ASSERT_TRUE(wait_for(trace, [&](const std::string& t) { return occurrences(t, running_again) >= 1; }, 90s))
      << slurp(head.err);
  const auto before = read_trace(trace);
  const auto started = of(before, "job_started");
  ASSERT_EQ(started.size(), 1u);
  const std::string host = started[0]["host"].get<std::string>();
  ASSERT_EQ(host.rfind("node", 0), 0u) << host;
  const std::string node = host.substr(4);
  const int agent = of(before, "node_advertised").at(0)["agent_pid"].get<int>();
  const std::string harness = VRAMSIM_SLURM_HARNESS_SCRIPT;
  ASSERT_EQ(run({"/usr/bin/env", "NODE=" + node, harness, "node-cut", harness_}, "cut", 30s), 0)
      << slurp(work_ + "/cut.err");
  const bool failed = wait_for(trace, [](const std::string& t) { return t.find("\"NODE_FAIL\"") != std::string::npos; },
                               120s);
  // The replacement starts while the node is still cut off: restored
  // first, the node would be idle again and SLURM could choose it.
  const bool replaced =
      wait_for(trace, [](const std::string& t) { return occurrences(t, "\"job_started\"") >= 2; }, 90s);
  // The agent exits by itself (--head-timeout, 30 s) once cut off.
  bool agent_gone = false;
  for (int i = 0; i < 450 && !agent_gone; ++i) {
    agent_gone = ::kill(agent, 0) != 0;
    if (!agent_gone) std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(run({"/usr/bin/env", "NODE=" + node, harness, "node-restore", harness_}, "restore", 60s), 0)
      << slurp(work_ + "/restore.err");
  const bool runs_again =
      wait_for(trace, [&](const std::string& t) { return occurrences(t, running_again) >= 2; }, 90s);
  kill(head.pid, SIGTERM);
  EXPECT_TRUE(failed) << slurp(trace);
  EXPECT_TRUE(replaced) << slurp(trace);
  EXPECT_TRUE(runs_again) << slurp(trace);
  EXPECT_TRUE(agent_gone) << "the cut-off agent " << agent << " is still running";
  EXPECT_EQ(wait(head, 180s), 0) << slurp(head.err);
  const auto ev = read_trace(trace);
  bool node_fail = false;
  for (const auto& e : of(ev, "job_ended"))
    if (e["job"] == started[0]["job"]) {
      EXPECT_EQ(e["state"], "FAILED") << e.fields;
      EXPECT_EQ(e["slurm_state"], "NODE_FAIL") << e.fields;
      node_fail = true;
    }
  EXPECT_TRUE(node_fail);
  ASSERT_GE(of(ev, "node_lost").size(), 1u);
  const auto all_started = of(ev, "job_started");
  ASSERT_GE(all_started.size(), 2u) << "a new worker job for the lost node's replica";
  EXPECT_NE(all_started[1]["host"], host) << "the new job runs on another node";
  int running = 0;
  for (const auto& e : of(ev, "app_state")) running += e["to"] == "RUNNING";
  EXPECT_EQ(running, 2) << "RUNNING, lost, RUNNING again";
  EXPECT_EQ(of(ev, "shutdown_done").size(), 1u);
  EXPECT_TRUE(queued(run_id).empty());
}

}  // namespace
