// Scenario validation: one test per error class, each asserting that the
// message names the file and the JSON path of the field.
#include "tests/support/test_dir.hpp"
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "scenario/scenario.hpp"

using namespace vramsim;

namespace {

ScenarioError parse_error(const std::string& text) {
  try {
    parse_scenario(Json::parse(text), "case.json");
  } catch (const ScenarioError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << text;
  return ScenarioError("", "", "");
}

}  // namespace

TEST(ScenarioValidation, UnknownFieldNamesPathAndKnownFields) {
  auto e = parse_error(R"({"cluster": {"max_workers": 1, "max_wokers": 2}})");
  EXPECT_EQ(e.file(), "case.json");
  EXPECT_EQ(e.path(), "$.cluster.max_wokers");
  EXPECT_NE(e.problem().find("unknown field"), std::string::npos);
  EXPECT_NE(e.problem().find("max_workers"), std::string::npos);
}

TEST(ScenarioValidation, WrongTypeSaysWhatWasExpected) {
  auto e = parse_error(R"({"apps": [{"id": "a", "replicas": "four"}]})");
  EXPECT_EQ(e.path(), "$.apps[0].replicas");
  EXPECT_EQ(e.problem(), "expected an integer, got a string");
}

TEST(ScenarioValidation, SiteSettingsOfTheWorkerJobAreCheckedForTheScript) {
  auto s = parse_scenario(Json::parse(R"({"cluster": {"worker_defaults": {"partition": "gpu", "account": "p1",
      "qos": "high", "gpu_type": "a100", "constraint": "ib&nvme", "reservation": "r1"}}})"), "case.json");
  const auto& o = s.control.autoscaler.defaults.slurm;
  EXPECT_EQ(o.partition, "gpu");
  EXPECT_EQ(o.account, "p1");
  EXPECT_EQ(o.qos, "high");
  EXPECT_EQ(o.gpu_type, "a100");
  EXPECT_EQ(o.constraint, "ib&nvme");
  EXPECT_EQ(o.reservation, "r1");
  auto e = parse_error(R"({"cluster": {"worker_defaults": {"partition": "gpu\n#SBATCH --uid=0"}}})");
  EXPECT_EQ(e.path(), "$.cluster.worker_defaults.partition");
  EXPECT_NE(e.problem().find("expected letters, digits"), std::string::npos) << e.problem();
  e = parse_error(R"({"cluster": {"worker_defaults": {"qos": ""}}})");
  EXPECT_EQ(e.path(), "$.cluster.worker_defaults.qos");
  e = parse_error(R"({"cluster": {"worker_defaults": {"account": 7}}})");
  EXPECT_EQ(e.path(), "$.cluster.worker_defaults.account");
}

TEST(ScenarioValidation, NegativeDurationIsRefused) {
  auto e = parse_error(R"({"cluster": {"latency": {"node_boot": "-1s"}}})");
  EXPECT_EQ(e.path(), "$.cluster.latency.node_boot");
  EXPECT_NE(e.problem().find("non-negative duration"), std::string::npos);
  auto n = parse_error(R"({"horizon": -3})");
  EXPECT_EQ(n.path(), "$.horizon");
}

TEST(ScenarioValidation, UnknownGpuModelListsTheCatalogue) {
  auto e = parse_error(R"({"cluster": {"partition": [{"gpu": "B300"}]}})");
  EXPECT_EQ(e.path(), "$.cluster.partition[0].gpu");
  EXPECT_NE(e.problem().find("unknown GPU model 'B300'"), std::string::npos);
  EXPECT_NE(e.problem().find("A100-SXM4-40GB"), std::string::npos);
}

TEST(ScenarioValidation, UnknownPolicyNameIsRefused) {
  auto e = parse_error(R"({"policies": {"preset": "fixed", "autoscaler": "eager"}})");
  EXPECT_EQ(e.path(), "$.policies");
  EXPECT_NE(e.problem().find("unknown variant 'eager' for policy model 'autoscaler'"), std::string::npos);
  auto p = parse_error(R"({"policies": "newest"})");
  EXPECT_NE(p.problem().find("unknown policy preset 'newest'"), std::string::npos);
}

TEST(ScenarioValidation, BadJsonGivesLineAndColumn) {
  const testing_support::TestDir dir;
  const auto path = dir.path() / "bad.json";
  {
    std::ofstream out(path);
    out << "{\n  \"seed\": 1,\n  \"apps\": [\n";
  }
  try {
    load_scenario(path.string());
    FAIL() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.file(), path.string());
    EXPECT_EQ(e.path(), "$");
    EXPECT_NE(e.problem().find("invalid JSON at line 4"), std::string::npos) << e.problem();
  }
  std::filesystem::remove(path);
}

TEST(ScenarioValidation, UnknownAppInActionAndExpectation) {
  auto a = parse_error(R"({"apps": [{"id": "a"}], "actions": [{"do": "stop", "app": "b"}]})");
  EXPECT_EQ(a.path(), "$.actions[0].app");
  auto x = parse_error(R"({"apps": [{"id": "a"}], "expect": [{"app": "b", "admitted": true}]})");
  EXPECT_EQ(x.path(), "$.expect[0].app");
}

TEST(ScenarioValidation, ExpectationFieldsAreChecked) {
  auto e = parse_error(R"({"apps": [{"id": "a"}], "expect": [{"app": "a", "state": "READY"}]})");
  EXPECT_EQ(e.path(), "$.expect[0].state");
  auto m = parse_error(R"({"expect": [{"metric": "joules", "max": 1}]})");
  EXPECT_EQ(m.path(), "$.expect[0].metric");
}

// Every expectation field is type-checked at load: the run never meets a
// value of the wrong type (each of these used to abort mid-run).
TEST(ExpectationValidation, EveryFieldIsTypeCheckedAtLoad) {
  const std::string apps = R"("apps": [{"id": "a"}], )";
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {R"({"event": 5})", "$.expect[0].event", "expected a string, got an integer"},
      {R"({"app": 5, "admitted": true})", "$.expect[0].app", "expected a string, got an integer"},
      {R"({"event": "scale_up", "count": "x"})", "$.expect[0].count", "expected an integer, got a string"},
      {R"({"app": "a", "admitted": "yes"})", "$.expect[0].admitted", "expected true or false, got a string"},
      {R"({"metric": "scale_ups", "equals": "0"})", "$.expect[0].equals", "expected a number, got a string"},
      {R"({"app": "a", "message": 5})", "$.expect[0].message", "expected a string, got an integer"},
      {R"({"app": "a", "message_contains": []})", "$.expect[0].message_contains", "expected a string, got an array"},
      {R"({"app": "a", "reservation": 1})", "$.expect[0].reservation", "expected an object, got an integer"},
      {R"({"event": "scale_up", "match": [1]})", "$.expect[0].match", "expected an object, got an array"},
      {R"({"app": "a", "state": "RUNNING", "within": true})", "$.expect[0].within", "expected a duration"},
      {R"({"app": "a", "state": "RUNNING", "at_end": 1})", "$.expect[0].at_end", "expected true or false"},
      {R"({"name": 3, "event": "scale_up"})", "$.expect[0].name", "expected a string, got an integer"},
      {R"({"event": "scale_up", "after": {"event": 1}})", "$.expect[0].after.event", "expected a string"},
      {R"({"event": "scale_up", "after": "scale_up"})", "$.expect[0].after", "expected an object"},
      {R"({"event": "scale-up"})", "$.expect[0].event", "expected an event kind of docs/trace-format.md, got \"scale-up\""},
      {R"({"event": "scale_up", "before": {"event": "job_state"}})", "$.expect[0].before.event",
       "expected an event kind of docs/trace-format.md"},
      {R"({"metric": "jobs_submited", "equals": 1})", "$.expect[0].metric", "expected a run metric of docs/sweeps.md"},
      {R"({"invariant": "max_worker_jobs", "max": 1.5})", "$.expect[0].max", "expected an integer"},
      {R"({"status_line": {"node": 1, "contains": "x", "at": "1s"}})", "$.expect[0].status_line.node",
       "expected a string"},
  };
  for (const auto& [expect, path, problem] : cases) {
    auto e = parse_error("{" + apps + R"("expect": [)" + expect + "]}");
    EXPECT_EQ(e.file(), "case.json");
    EXPECT_EQ(e.path(), path) << expect;
    EXPECT_NE(e.problem().find(problem), std::string::npos) << expect << ": " << e.problem();
  }
}

TEST(ExpectationValidation, EachExpectationMustCheckSomething) {
  const std::string apps = R"("apps": [{"id": "a"}], )";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"metric": "scale_ups"})", "must compare"},
      {R"({"app": "a"})", "must check something"},
      {R"({"app": "a", "within": "10s"})", "must check something"},
      {R"({"app": "a", "admitted": true, "within": "10s"})", "\"within\" needs \"state\""},
      {R"({"app": "a", "admitted": true, "at_end": true})", "\"at_end\" needs \"state\""},
      {R"({"name": "x"})", "needs one of"},
      {R"({"app": "a", "event": "scale_up", "admitted": true})", "exactly one of"},
      {R"({"invariant": "max_worker_jobs"})", "needs \"max\""},
      {R"({"invariant": "always_fine"})", "expected an invariant"},
      {R"({"status_line": {"node": "node-1", "contains": "x"}})", "expected the time"},
      {R"({"event": "scale_up", "equals": 1})", "does not apply"},
      {R"({"metric": "scale_ups", "equals": 1, "within": "1s"})", "does not apply"},
  };
  for (const auto& [expect, problem] : cases) {
    auto e = parse_error("{" + apps + R"("expect": [)" + expect + "]}");
    EXPECT_NE(e.problem().find(problem), std::string::npos) << expect << ": " << e.problem();
  }
}

TEST(ExpectationValidation, CountsAreNonNegativeIntegersInOrder) {
  auto neg = parse_error(R"({"expect": [{"event": "scale_up", "count": -1}]})");
  EXPECT_EQ(neg.path(), "$.expect[0].count");
  EXPECT_NE(neg.problem().find("expected an integer in [0, inf]"), std::string::npos) << neg.problem();
  auto frac = parse_error(R"({"expect": [{"event": "scale_up", "min_count": 1.5}]})");
  EXPECT_EQ(frac.path(), "$.expect[0].min_count");
  auto order = parse_error(R"({"expect": [{"event": "scale_up", "min_count": 3, "max_count": 2}]})");
  EXPECT_EQ(order.path(), "$.expect[0].max_count");
  EXPECT_NE(order.problem().find("max_count >= min_count"), std::string::npos);
  auto both = parse_error(R"({"expect": [{"event": "scale_up", "count": 1, "max_count": 2}]})");
  EXPECT_EQ(both.path(), "$.expect[0].count");
  auto m = parse_error(R"({"expect": [{"metric": "scale_ups", "min": 3, "max": 2}]})");
  EXPECT_EQ(m.path(), "$.expect[0].max");
}

// One parser for `within`: strings and numbers of seconds give the same.
TEST(ExpectationValidation, WithinParsesOnce) {
  auto s = parse_scenario(Json::parse(R"({"apps": [{"id": "a"}], "expect": [
      {"app": "a", "state": "RUNNING", "within": "1.5m"},
      {"event": "scale_up", "within": 90},
      {"event": "job_ended", "after": {"event": "scale_down"}, "within": "2m", "max_count": 1}]})"),
                          "case.json");
  ASSERT_EQ(s.expectations.size(), 3u);
  EXPECT_EQ(*s.expectations[0].within, 90 * kSecond);
  EXPECT_FALSE(s.expectations[0].at_end) << "a deadline alone does not check the final state";
  EXPECT_EQ(*s.expectations[1].within, 90 * kSecond);
  EXPECT_EQ(*s.expectations[2].within, 120 * kSecond);
  EXPECT_EQ(s.expectations[2].after->event, TraceKind::scale_down);
  EXPECT_EQ(s.expectations[2].min_count, 0);
  EXPECT_EQ(s.expectations[2].max_count, 1);
}

TEST(ScenarioValidation, LatencyDistributionsParse) {
  auto s = parse_scenario(Json::parse(R"({"cluster": {"latency": {
      "queue_wait": {"dist": "exponential", "mean": "30s"},
      "node_boot": {"dist": "lognormal", "median": "40s", "sigma": 0.3},
      "registration": {"dist": "uniform", "min": "2s", "max": "8s"},
      "replica_init": {"dist": "empirical", "samples": ["1s", "2s", 3]},
      "runtime_env_install": "90s"}}})"), "case.json");
  EXPECT_EQ(s.slurm.queue_wait.kind, LatencyModel::Kind::Exponential);
  EXPECT_EQ(s.slurm.queue_wait.mean, 30 * kSecond);
  EXPECT_EQ(s.slurm.node_boot.median, 40 * kSecond);
  EXPECT_EQ(s.slurm.registration.hi, 8 * kSecond);
  EXPECT_EQ(s.control.replica_init.samples.size(), 3u);
  EXPECT_EQ(s.control.runtime_env_install.value, 90 * kSecond);
  auto bad = parse_error(R"({"cluster": {"latency": {"queue_wait": {"dist": "gamma"}}}})");
  EXPECT_EQ(bad.path(), "$.cluster.latency.queue_wait.dist");
}

TEST(ScenarioFiles, EveryBundledScenarioParses) {
  int n = 0;
  for (const auto& f : std::filesystem::directory_iterator(std::string(VRAMSIM_SOURCE_DIR) + "/scenarios")) {
    if (f.path().extension() != ".json") continue;
    EXPECT_NO_THROW(load_scenario(f.path().string())) << f.path();
    ++n;
  }
  EXPECT_GE(n, 11);
}

TEST(GpuCatalogue, AcceleratorTypeFollowsRaysRule) {
  EXPECT_EQ(ray_accelerator_type("NVIDIA A100-SXM4-40GB"), "A100");
  EXPECT_EQ(ray_accelerator_type("NVIDIA GeForce RTX 3090"), "G");
  EXPECT_EQ(ray_accelerator_type("Tesla T4"), "T4");
  EXPECT_EQ(ray_accelerator_type("NVIDIA H100 80GB HBM3"), "H100");
  EXPECT_EQ(gpu_catalogue().at("A100-SXM4-40GB").memory_mb, 40960);
}

// SlurmWorkers(max_workers=4) (slurm_workers.py:57@ad84209): a scenario that
// does not state it gets 4, one that does gets its own.
TEST(ScenarioDefaults, MaxWorkersIsFour) {
  EXPECT_EQ(parse_scenario(Json::parse(R"({"cluster": {}})"), "case.json").control.autoscaler.max_workers, 4);
  EXPECT_FALSE(parse_scenario(Json::parse(R"({"cluster": {}})"), "case.json").max_workers_stated);
  const auto one = parse_scenario(Json::parse(R"({"cluster": {"max_workers": 1}})"), "case.json");
  EXPECT_EQ(one.control.autoscaler.max_workers, 1);
  EXPECT_TRUE(one.max_workers_stated);
}

// build() awaits the introspection task: a fixed delay to the check is gone,
// and a scenario still giving one is told what replaced it.
TEST(ScenarioValidation, IntrospectionCheckAfterIsRefusedWithWhatReplacedIt) {
  auto e = parse_error(R"({"cluster": {"introspection": {"check_after": "15s"}}})");
  EXPECT_EQ(e.path(), "$.cluster.introspection.check_after");
  EXPECT_NE(e.problem().find("env_build"), std::string::npos) << e.problem();
  auto s = parse_scenario(Json::parse(R"({"cluster": {"introspection": {"env_build": "7s", "cpus": 2}}})"), "case.json");
  EXPECT_EQ(s.control.introspection_env_build, 7 * kSecond);
  EXPECT_EQ(s.control.introspection_request.get(kCPU), 2.0);
  auto zero = parse_scenario(Json::parse(R"({"cluster": {"introspection": {"cpus": 0}}})"), "case.json");
  EXPECT_TRUE(zero.control.introspection_request.empty()) << "num_cpus=0: no required resources, as Ray lists it";
}
