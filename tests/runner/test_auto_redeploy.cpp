// BioEngine's auto-redeploy (apps[].auto_redeploy; AppsManager::
// monitor_applications, manager.py:1299-1489 at aicell-lab/bioengine
// fba5ffe): an admitted app that fails is deployed again at the first pass
// that sees it failed, then after 10, 20, 40, ... s, at most 600 s; never
// when it was not admitted, and no more once stopped.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "runner/simulation.hpp"
#include "scenario/scenario.hpp"
#include "tests/support/test_dir.hpp"

namespace vramsim {
namespace {

// An app of 40000 MB on a 40 GB A100 (CUDA gives 40440 MiB, the context
// 680: 40680 never fits), so every deploy ends DEPLOY_FAILED after three
// failed constructors. `mode`: "static" or "slurm" (a warm worker either way).
Json failing(bool auto_redeploy, const std::string& mode = "static") {
  Json doc = Json::parse(R"({"horizon": "40m",
    "cluster": {"max_workers": 1, "initial_workers": {"count": 1, "gpus": 1, "cpus": 16},
                "worker_defaults": {"cpus": 16, "gpus": 1, "mem_per_cpu_gb": 8},
                "partition": [{"count": 1, "cpus": 16, "memory_gb": 256, "gpus": 1, "gpu": "A100-SXM4-40GB"}],
                "latency": {"runtime_env_install": "20s", "replica_init": "10s"}},
    "apps": [{"id": "whole", "gpu_memory_mb": 40000, "cpus": 1, "deploy_at": "0s"}]})");
  doc["cluster"]["mode"] = mode;
  doc["apps"][0]["auto_redeploy"] = auto_redeploy;
  return doc;
}

std::vector<Json> events(const Json& doc, const std::string& kind) {
  testing_support::TestDir dir;
  RunOptions o;
  o.outputs.trace_path = dir.file("trace.jsonl");
  run_scenario(parse_scenario(doc, "redeploy.json"), o);
  std::ifstream in(o.outputs.trace_path);
  std::vector<Json> out;
  for (std::string line; std::getline(in, line);) {
    Json e = Json::parse(line);
    if (e["kind"] == kind) out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

// The schedule: attempt n waits min(600, 10 x 2^(n-1)) s before the next,
// and a redeploy still deploying is not fired again: each gap is at least
// the delay the attempt before set.
TEST(AutoRedeploy, AFailedAppIsRedeployedWithADoublingBackoff) {
  for (const char* mode : {"static", "slurm"}) {
    SCOPED_TRACE(mode);
    const auto r = events(failing(true, mode), "auto_redeploy");
    ASSERT_GE(r.size(), 7u) << "40 minutes hold at least 7 attempts";
    const std::vector<double> delays_s = {10, 20, 40, 80, 160, 320, 600, 600};
    for (std::size_t i = 0; i < r.size(); ++i) {
      EXPECT_EQ(r[i]["attempt"], static_cast<int>(i + 1));
      EXPECT_EQ(r[i]["state"], "DEPLOY_FAILED");
      const double delay = delays_s[std::min(i, delays_s.size() - 1)];
      EXPECT_EQ(r[i]["next_after_us"].get<double>(), delay * 1e6);
      if (i > 0) {
        const double gap = (r[i]["t"].get<double>() - r[i - 1]["t"].get<double>()) / 1e6;
        EXPECT_GE(gap, delays_s[std::min(i - 1, delays_s.size() - 1)]) << "attempt " << i + 1;
      }
    }
    // Each redeploy deploys again: its constructors fail again.
    EXPECT_EQ(events(failing(true, mode), "deployment_failed").size(), r.size() + 1);
  }
}

// monitor_applications is the last step of the worker's monitor pass, and
// the loop runs in every mode (worker.py:840-902@fba5ffe): the passes start
// at 1 s, then every 10.005 s (10 s + 5 ms of work), a static cluster's too.
TEST(AutoRedeploy, ItFiresAtTheMonitorPassesInEveryMode) {
  for (const char* mode : {"static", "slurm"}) {
    SCOPED_TRACE(mode);
    const auto r = events(failing(true, mode), "auto_redeploy");
    ASSERT_FALSE(r.empty());
    for (const auto& e : r) {
      const auto t_us = e["t"].get<std::int64_t>();
      EXPECT_EQ((t_us - 1'000'000) % 10'005'000, 0) << t_us;
    }
  }
}

// A static cluster's status is served from the last pass as well.
TEST(AutoRedeploy, AStaticClustersStatusNamesItsPass) {
  Json doc = failing(false);
  doc["actions"] = Json::parse(R"([{"at": "100s", "do": "status"}])");
  RunOptions o;
  const RunResult r = run_scenario(parse_scenario(doc, "redeploy.json"), o);
  ASSERT_FALSE(r.status_lines.empty());
  EXPECT_NE(r.status_lines[0].find("the pass at 91.045 s"), std::string::npos) << r.status_lines[0];
}

TEST(AutoRedeploy, OffByDefaultAndNeverForAnAppTheCheckRejected) {
  EXPECT_TRUE(events(failing(false), "auto_redeploy").empty());
  // 20 CPUs on a 16-CPU node: the resource check rejects it, and BioEngine
  // never registers a rejected app for the monitor.
  Json doc = failing(true);
  doc["apps"][0]["cpus"] = 20;
  EXPECT_TRUE(events(doc, "auto_redeploy").empty());
}

// stop_app drops the app and its backoff (_undeploy_application).
TEST(AutoRedeploy, AStoppedAppIsNotRedeployed) {
  Json doc = failing(true);
  doc["actions"] = Json::parse(R"([{"at": "10m", "do": "stop", "app": "whole"}])");
  for (const auto& e : events(doc, "auto_redeploy")) EXPECT_LT(e["t"].get<double>(), 600e6);
  EXPECT_FALSE(events(doc, "auto_redeploy").empty());
}

}  // namespace vramsim
