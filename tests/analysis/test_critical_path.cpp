// The critical path follows the latest-arriving cause back from RUNNING.
#include <gtest/gtest.h>

#include <sstream>

#include "analysis/critical_path.hpp"
#include "runner/simulation.hpp"

using namespace vramsim;

namespace {

std::vector<std::string> kinds(const CriticalPath& p) {
  std::vector<std::string> out;
  for (const auto& s : p.steps) out.push_back(s.kind);
  return out;
}

RunResult run_file(const std::string& name) {
  Scenario sc = load_scenario(std::string(VRAMSIM_SOURCE_DIR) + "/scenarios/" + name);
  RunOptions opt;
  opt.policies = "fixed";
  opt.outputs.critical_path = true;
  return run_scenario(sc, opt);
}

TraceEvent ev(SimTime t, const std::string& kind, Json fields) {
  return TraceEvent{t * kSecond, trace_kind_named(kind).value(), std::move(fields)};
}

// A node registered at 2 s; app a deployed at 10 s, checked at 25 s and its
// replica placed on that node at once.
std::vector<TraceEvent> warm_node_deploy() {
  return {
      ev(0, "job_submitted", {{"job", "7"}}),
      ev(0, "job_started", {{"job", "7"}, {"host", "h"}}),
      ev(1, "node_advertised", {{"job", "7"}, {"resources", Json::object()}}),
      ev(2, "node_registered", {{"node", "node-1"}, {"job", "7"}}),
      ev(10, "deploy_requested", {{"app", "a"}}),
      ev(10, "introspection_submitted", {{"app", "a"}}),
      ev(25, "sizing", {{"app", "a"}, {"branch", "vram"}, {"num_gpus", 0.01}}),
      ev(25, "admission", {{"app", "a"}, {"admitted", true}, {"reason", "node_with_room"}}),
      ev(25, "replicas_submitted", {{"app", "a"}, {"replicas", 1}}),
      ev(25, "replica_placed", {{"app", "a"}, {"replica", "a#0"}, {"node", "node-1"}}),
  };
}

}  // namespace

// A warm node registered long ago: the replica waited for admission, so the
// path runs through the deploy chain, not through the node.
TEST(CriticalPath, LaterCauseWinsOverEarlierOne) {
  std::vector<TraceEvent> events = warm_node_deploy();
  events.push_back(ev(40, "replica_running", {{"app", "a"}, {"replica", "a#0"}}));
  events.push_back(ev(40, "app_state", {{"app", "a"}, {"to", "RUNNING"}}));
  auto p = critical_path(events, "a");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(kinds(*p), (std::vector<std::string>{"deploy_requested", "introspection_submitted", "sizing",
                                                 "admission", "replicas_submitted", "replica_placed",
                                                 "replica_running", "app_state"}));
  EXPECT_EQ(p->requested, 10 * kSecond);
  EXPECT_EQ(p->running, 40 * kSecond);
  EXPECT_EQ(p->steps[2].waited, "introspection");
}

TEST(CriticalPath, NeverRunningHasNoPath) {
  std::vector<TraceEvent> events = {ev(0, "deploy_requested", {{"app", "a"}})};
  EXPECT_FALSE(critical_path(events, "a").has_value());
}

// Cold start: the node is the bottleneck, so the path goes deploy ->
// introspection task -> scale-up -> SLURM job -> node -> replica.
TEST(CriticalPath, ColdStartRunsThroughTheWorkerJob) {
  const RunResult r = run_file("cold-start-a100.json");
  ASSERT_EQ(r.critical_paths.size(), 1u);
  const CriticalPath& p = r.critical_paths[0];
  EXPECT_EQ(kinds(p), (std::vector<std::string>{"deploy_requested", "introspection_submitted", "scale_up",
                                                "job_submitted", "job_started", "node_advertised",
                                                "node_registered", "replica_placed", "replica_running",
                                                "app_state"}));
  EXPECT_EQ(p.running - p.requested, 181 * kSecond);
  std::map<std::string, SimTime> at;
  for (const auto& s : p.steps) at[s.kind] = s.t;
  EXPECT_EQ(at["job_started"] - at["job_submitted"], 19 * kSecond);     // queue wait
  EXPECT_EQ(at["node_advertised"] - at["job_started"], 30 * kSecond);   // boot
  EXPECT_EQ(at["replica_running"] - at["replica_placed"], 125 * kSecond);  // env + init
  std::ostringstream out;
  print_critical_path(p, out);
  EXPECT_NE(out.str().find("[SLURM queue wait]"), std::string::npos) << out.str();
  // The scenario's latencies, 19 + 30 + 6 + (110 + 15) s, and the 1 s to
  // the worker loop's first monitor pass: 181 s.
  EXPECT_NE(out.str().find("set by the scenario's latencies: 180.000 s (SLURM queue wait 19.000 s, node boot "
                           "30.000 s, registration 6.000 s, runtime env install + replica init 125.000 s)"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("by the control plane's mechanism: 1.000 s (pending demand seen by the autoscaler tick "
                           "1.000 s)"),
            std::string::npos)
      << out.str();
}

// The app is RUNNING once its proxy runs too: a proxy whose env installs
// longer than the replica's path puts it on the critical path, and the wait
// is an input (cluster.latency.proxy_env_install), not mechanism.
TEST(CriticalPath, AProxyInstallingLongerThanTheReplicaIsOnThePath) {
  std::vector<TraceEvent> events = warm_node_deploy();
  for (TraceEvent e : {ev(25, "proxy_placed", {{"app", "a"}, {"node", "head"}, {"job", ""}}),
                       ev(40, "replica_running", {{"app", "a"}, {"replica", "a#0"}}),
                       ev(225, "proxy_running", {{"app", "a"}, {"node", "head"}}),
                       ev(225, "app_state", {{"app", "a"}, {"to", "RUNNING"}})})
    events.push_back(std::move(e));
  auto p = critical_path(events, "a");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(kinds(*p), (std::vector<std::string>{"deploy_requested", "introspection_submitted", "sizing",
                                                 "admission", "replicas_submitted", "proxy_placed",
                                                 "proxy_running", "app_state"}));
  std::ostringstream out;
  print_critical_path(*p, out);
  EXPECT_NE(out.str().find("a's proxy running   [proxy env install]"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("set by the scenario's latencies: 215.000 s (introspection 15.000 s, proxy env install "
                           "200.000 s)"),
            std::string::npos)
      << out.str();
}

TEST(CriticalPath, OnlyRequestedWhenAsked) {
  Scenario sc = load_scenario(std::string(VRAMSIM_SOURCE_DIR) + "/scenarios/smoke.json");
  EXPECT_TRUE(run_scenario(sc, RunOptions{}).critical_paths.empty());
}
