// Scenario validation: one test per error class, each asserting that the
// message names the file and the JSON path of the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runner/scenario.hpp"

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
  const auto path = std::filesystem::temp_directory_path() / "vramsim-bad.json";
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
