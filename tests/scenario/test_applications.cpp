// Applications of several deployments (apps[].deployments[]): each
// deployment an app, admitted together as _sum_resources sums them, and a
// request's path through the deployments it calls, against hand-worked
// latencies and the model-runner shape (scenarios/serving/model-runner.json).
#include <gtest/gtest.h>

#include <string>

#include "runner/simulation.hpp"
#include "scenario/scenario.hpp"
#include "tests/support/test_paths.hpp"

namespace vramsim {
namespace {

// A static node of `cpus` CPUs and one A100, and an application whose
// deployments are given; its ingress gets `requests` requests at 60 s
// (its replicas are RUNNING by then).
Json application(const Json& deployments, int requests = 1, int cpus = 16) {
  Json doc = Json::parse(R"({"horizon": "10m", "cluster": {"mode": "static", "max_workers": 1, "initial_workers": 1,
      "worker_defaults": {"gpus": 1},
      "partition": [{"count": 1, "memory_gb": 256, "gpus": 1, "gpu": "A100-SXM4-80GB"}]}})");
  doc["cluster"]["partition"][0]["cpus"] = cpus;
  doc["cluster"]["worker_defaults"]["cpus"] = cpus;
  doc["apps"] = Json::array({{{"id", "app"}, {"deploy_at", "0s"}, {"deployments", deployments}}});
  doc["apps"][0]["deployments"][0]["serve"]["traffic"] =
      Json::parse(R"({"process": "piecewise", "points": [{"at": "0s", "rate_per_s": 1000}], "interpolation": "step",
                      "start": "60s"})");
  doc["apps"][0]["deployments"][0]["serve"]["traffic"]["max_requests"] = requests;
  return doc;
}

Json deployment(const std::string& name, const std::string& service, const Json& calls = Json::array()) {
  Json d = {{"name", name}, {"cpus", 1}, {"serve", {{"service_time", service}}}};
  if (!calls.empty()) d["calls"] = calls;
  return d;
}

RunResult run(const Json& doc) { return run_scenario(parse_scenario(doc, "application.json"), RunOptions{}); }

const ServeOutcome& outcome(const RunResult& r, const std::string& app) {
  for (const auto& o : r.serving)
    if (o.app == app) return o;
  ADD_FAILURE() << "no serving outcome for " << app;
  static const ServeOutcome none;
  return none;
}

ScenarioError parse_error(const Json& doc) {
  try {
    parse_scenario(doc, "application.json");
  } catch (const ScenarioError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << doc.dump();
  return ScenarioError("", "", "");
}

}  // namespace

// Each deployment is the app APP.NAME of its application; deploy_at and
// the actions on the application reach every deployment in order.
TEST(Applications, EachDeploymentIsAnAppOfItsApplication) {
  Json doc = application(Json::array({deployment("Entry", "1s", {"Runtime"}), deployment("Runtime", "2s")}));
  doc["actions"] = Json::parse(R"([{"at": "5m", "do": "stop", "app": "app"}])");
  const Scenario s = parse_scenario(doc, "a.json");
  ASSERT_EQ(s.apps.size(), 2u);
  EXPECT_EQ(s.apps[0].id, "app.Entry");
  EXPECT_EQ(s.apps[1].id, "app.Runtime");
  EXPECT_EQ(s.apps[0].application, "app");
  EXPECT_EQ(s.apps[0].calls, std::vector<std::string>{"app.Runtime"});
  EXPECT_TRUE(s.apps[1].calls.empty());
  EXPECT_EQ(s.apps[1].application_members, (std::vector<std::string>{"app.Entry", "app.Runtime"}));
  EXPECT_EQ(s.applications.at("app").size(), 2u);
  ASSERT_EQ(s.actions.size(), 4u);
  EXPECT_EQ(s.actions[0].app, "app.Entry");
  EXPECT_EQ(s.actions[1].app, "app.Runtime");
  EXPECT_EQ(s.actions[3].kind, ActionKind::Stop);
  EXPECT_EQ(s.actions[3].app, "app.Runtime");
  EXPECT_EQ(s.traffic.count("app.Entry"), 1u) << "the application's traffic reaches its ingress";
}

// One request: its own work, then each call in turn, waited for: the
// ingress's latency is the whole path, 1 + 2 = 3 s; with a second call
// (1 + 2 + 0.5) 3.5 s; each callee's own row is its own time.
TEST(Applications, ARequestsLatencyIsItsWholePath) {
  RunResult r = run(application(Json::array({deployment("Entry", "1s", {"Runtime"}), deployment("Runtime", "2s")})));
  EXPECT_EQ(outcome(r, "app.Entry").completed, 1u);
  EXPECT_DOUBLE_EQ(*outcome(r, "app.Entry").latency_mean_s, 3.0);
  EXPECT_DOUBLE_EQ(*outcome(r, "app.Runtime").latency_mean_s, 2.0);
  EXPECT_EQ(r.metrics.req_completed, 1.0) << "the call downstream is not another request";
  EXPECT_DOUBLE_EQ(*r.metrics.req_latency_mean_s, 3.0);
  r = run(application(Json::array({deployment("Entry", "1s", {"Runtime", "Post"}), deployment("Runtime", "2s"),
                                   deployment("Post", "500ms")})));
  EXPECT_DOUBLE_EQ(*outcome(r, "app.Entry").latency_mean_s, 3.5);
  EXPECT_DOUBLE_EQ(*outcome(r, "app.Post").latency_mean_s, 0.5);
  // A chain: Entry -> Mid -> Leaf, 1 + 1 + 1.
  r = run(application(Json::array({deployment("Entry", "1s", {"Mid"}), deployment("Mid", "1s", {"Leaf"}),
                                   deployment("Leaf", "1s")})));
  EXPECT_DOUBLE_EQ(*outcome(r, "app.Entry").latency_mean_s, 3.0);
  EXPECT_DOUBLE_EQ(*outcome(r, "app.Mid").latency_mean_s, 2.0);
}

// A call refused downstream ends its caller's request as refused: three
// requests at once, a runtime of one slot and one place in its queue.
TEST(Applications, ACallRefusedDownstreamRefusesItsCaller) {
  Json runtime = deployment("Runtime", "2s");
  runtime["serve"]["max_ongoing_requests"] = 1;
  runtime["serve"]["max_queued_requests"] = 1;
  const RunResult r = run(application(Json::array({deployment("Entry", "100ms", {"Runtime"}), runtime}), 3));
  EXPECT_EQ(outcome(r, "app.Runtime").refused, 1u);
  EXPECT_EQ(outcome(r, "app.Entry").refused, 1u);
  EXPECT_EQ(outcome(r, "app.Entry").completed, 2u);
  EXPECT_EQ(r.metrics.req_refused, 1.0);
}

// Admitted once for all its deployments: one replica of each summed, as
// _sum_resources does. Two deployments of 3 CPUs fit a 4-CPU node each,
// not together: both are rejected; on 8 CPUs both are admitted.
TEST(Applications, AdmissionSumsEveryDeployment) {
  Json ds = Json::array({deployment("Entry", "1s", {"Runtime"}), deployment("Runtime", "1s")});
  ds[0]["cpus"] = 3;
  ds[1]["cpus"] = 3;
  RunResult r = run(application(ds, 1, 4));
  ASSERT_EQ(r.apps.size(), 2u);
  EXPECT_EQ(r.apps[0].admitted, "rejected");
  EXPECT_EQ(r.apps[1].admitted, "rejected") << "the other deployment follows its ingress";
  EXPECT_EQ(outcome(r, "app.Entry").completed, 0u);
  r = run(application(ds, 1, 8));
  EXPECT_EQ(r.apps[0].admitted, "admitted");
  EXPECT_EQ(r.apps[1].admitted, "admitted");
  EXPECT_EQ(outcome(r, "app.Entry").completed, 1u);
}

TEST(Applications, BadApplicationsAreRefusedNamingThePath) {
  struct Case {
    Json deployments;
    std::string path, says;
  };
  const std::vector<Case> cases = {
      {Json::array({deployment("A", "1s", {"Nope"})}), "$.apps[0].deployments[0].calls[0]", "unknown deployment"},
      {Json::array({deployment("A", "1s"), deployment("B", "1s", {"A"})}), "$.apps[0].deployments[1].calls[0]",
       "calls go down the list"},
      {Json::array({deployment("A", "1s"), deployment("A", "1s")}), "$.apps[0].deployments[1].name", "duplicate"},
      {Json::array({deployment("A", "1s"), {{"name", "B"}, {"cpus", 1}}}), "$.apps[0].deployments[0].calls", ""},
  };
  Json doc = application(cases[0].deployments);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    Json d = application(c.deployments);
    if (i == 3) d["apps"][0]["deployments"][0]["calls"] = Json::array({"B"});
    SCOPED_TRACE(d.dump());
    const auto e = parse_error(d);
    EXPECT_EQ(e.path(), c.path) << e.what();
    EXPECT_NE(e.problem().find(c.says), std::string::npos) << e.what();
  }
  // Traffic reaches the ingress only.
  Json d = application(Json::array({deployment("A", "1s", {"B"}), deployment("B", "1s")}));
  d["apps"][0]["deployments"][1]["serve"]["traffic"] = {{"rate_per_s", 1}};
  EXPECT_EQ(parse_error(d).path(), "$.apps[0].deployments[1].serve.traffic");
}

// The model-runner shape: the entry holds a request's slot while the
// runtime works, so at most 10 are in flight (5 on each runtime replica,
// which each take 5 x 2 s = 10 s), 30 wait at the entry (about 30 s at the
// runtime's 1 request a second, Little's law), and the rest are refused.
TEST(Applications, TheModelRunnerShapeQueuesAtItsEntryAndRefusesPastThirty) {
  const RunResult r = run_scenario(
      load_scenario(std::string(vramsim_test_source_dir()) + "/scenarios/serving/model-runner.json"), RunOptions{});
  EXPECT_TRUE(r.all_held());
  const ServeOutcome& entry = outcome(r, "runner.Entry");
  const ServeOutcome& runtime = outcome(r, "runner.Runtime");
  EXPECT_GT(entry.refused, 2000u);
  EXPECT_EQ(entry.completed, runtime.completed) << "every answer went through the runtime";
  EXPECT_EQ(runtime.arrived, entry.dispatched) << "the runtime sees only what the entry took";
  EXPECT_LE(runtime.peak_in_service, 10) << "the entry's 10 slots bound the runtime's load";
  EXPECT_NEAR(*runtime.p50_s, 10.0, 0.05);
  EXPECT_GT(*entry.wait_mean_s, 25.0);
  EXPECT_LT(*entry.wait_mean_s, 31.0);
}

}  // namespace vramsim

namespace vramsim {

// metrics_app narrows the run's req_* metrics: the application end to end
// (its ingress), or one deployment's own part.
TEST(Applications, MetricsAppNarrowsTheRunsRequestMetricsToOneAppOrDeployment) {
  Json doc = application(Json::array({deployment("Entry", "1s", {"Runtime"}), deployment("Runtime", "2s")}));
  RunResult r = run(doc);
  EXPECT_DOUBLE_EQ(*r.metrics.req_latency_mean_s, 3.0);
  const double all_replica_s = *r.metrics.replica_seconds;
  doc["metrics_app"] = "app.Runtime";
  r = run(doc);
  EXPECT_DOUBLE_EQ(*r.metrics.req_latency_mean_s, 2.0);
  EXPECT_LT(*r.metrics.replica_seconds, all_replica_s);
  doc["metrics_app"] = "app";
  r = run(doc);
  EXPECT_DOUBLE_EQ(*r.metrics.req_latency_mean_s, 3.0);
  EXPECT_DOUBLE_EQ(*r.metrics.replica_seconds, all_replica_s);
  doc["metrics_app"] = "nope";
  try {
    parse_scenario(doc, "a.json");
    ADD_FAILURE() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.path(), "$.metrics_app");
  }
}

}  // namespace vramsim
