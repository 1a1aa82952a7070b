// vramsim live on a 3-node harness of its own (fixture `multinode_limit`): a
// worker job that outlives its SLURM time limit. It takes two minutes of wall
// time, so it has a cluster to itself and runs beside the others.
#include <gtest/gtest.h>

#include <fstream>

#include "runner/simulation.hpp"
#include "tests/live/live_run_fixture.hpp"

using namespace vramsim;
using namespace vramsim::live_test;

namespace {

// 8. A worker job on the short partition (MaxTime 1 minute) that outlives its
// time limit: SLURM ends it TIMEOUT, and the live trace says what the
// simulated one does for the same scenario (TIMEOUT, time limit reached).
TEST_F(MultiNode, AJobPastItsTimeLimitIsTimeoutAsInSimulation) {
  const std::string run_id = "mn8-" + std::to_string(getpid());
  Json sc = Json::parse(slurp(kScenarios + "cold-start-live.json"));
  sc["cluster"]["worker_defaults"]["partition"] = "short";
  // 20 minutes of scenario time: 60 s of wall time at --time-scale 0.05,
  // the shortest limit SLURM has. The run is stopped by a signal once the
  // job has timed out, not at a set time: on a loaded machine the job's
  // start and SLURM's time-limit check can together take a minute more.
  sc["cluster"]["worker_defaults"]["time_limit"] = "20m";
  sc["actions"] = Json::array({Json{{"at", "6000s"}, {"do", "shutdown"}}});  // 300 s of wall time
  sc["horizon"] = "6h";
  sc["expect"] = Json::array();
  const std::string file = work_ + "/timeout.json";
  std::ofstream(file) << sc.dump(2);
  auto a = args("cold-start-live.json", run_id);
  a[2] = file;
  const auto head = spawn(a, "head");
  const std::string trace = work_ + "/" + run_id + "/trace.jsonl";
  const bool ended = wait_for(
      trace, [](const std::string& t) { return t.find("\"time limit reached\"") != std::string::npos; }, 240s);
  // The head scales up again at once for the replica the job took with it.
  // The signal waits for that job's sbatch to answer: a shutdown while it
  // is in flight leaves the job behind, as the fixed sweep does (it lists
  // the queue before sbatch has answered; workers_monitor.cpp), which is
  // not what this test is about.
  const bool resubmitted = wait_for(
      trace, [](const std::string& t) { return occurrences(t, "\"kind\":\"job_submitted\"") >= 2; }, 90s);
  kill(head.pid, SIGTERM);
  EXPECT_EQ(wait(head, 120s), 0) << slurp(work_ + "/head.err");
  EXPECT_TRUE(ended) << slurp(trace);
  EXPECT_TRUE(resubmitted) << slurp(trace);
  const auto live = read_trace(trace);
  const auto submitted = of(live, "job_submitted");
  ASSERT_FALSE(submitted.empty()) << slurp(work_ + "/head.err");
  bool timed_out = false;
  for (const auto& e : of(live, "job_ended"))
    if (e["job"] == submitted[0]["job"]) {
      EXPECT_EQ(e["state"], "TIMEOUT") << e.fields;
      EXPECT_EQ(e["slurm_state"], "TIMEOUT") << e.fields;
      EXPECT_EQ(e["reason"], "time limit reached") << e.fields;
      timed_out = true;
    }
  EXPECT_TRUE(timed_out) << slurp(work_ + "/head.err");
  // The simulation of the same file ends its first worker the same way.
  Scenario s = load_scenario(file);
  RunOptions opt;
  opt.policies = "fixed";
  opt.outputs.trace_path = work_ + "/sim.jsonl";
  run_scenario(s, opt);
  const auto sim = read_trace(opt.outputs.trace_path);
  const auto sim_ended = of(sim, "job_ended");
  ASSERT_FALSE(sim_ended.empty());
  EXPECT_EQ(sim_ended[0]["state"], "TIMEOUT") << sim_ended[0].fields;
  EXPECT_EQ(sim_ended[0]["reason"], "time limit reached") << sim_ended[0].fields;
  // The replacement job the head submitted after the timeout was cancelled
  // at its shutdown; it leaves the queue once SLURM has completed it.
  EXPECT_TRUE(queue_drains(run_id, std::chrono::seconds(60))) << slurp(trace);
}

}  // namespace
