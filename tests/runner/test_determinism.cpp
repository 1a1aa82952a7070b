// Same scenario and seed -> byte-identical trace; another seed changes only
// what is drawn at random (times and latency fields), not the story.
#include "tests/support/test_dir.hpp"
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runner/simulation.hpp"

using namespace vramsim;

namespace {

const char* kRandomScenario = R"({
  "name": "random-latencies", "seed": 42, "horizon": "20m",
  "cluster": {
    "max_workers": 1,
    "partition": [{"count": 2, "cpus": 16, "memory_gb": 256, "gpus": 1, "gpu": "A100-SXM4-40GB"}],
    "latency": {
      "queue_wait": {"dist": "uniform", "min": "29s", "max": "49s"},
      "node_boot": {"dist": "lognormal", "median": "30s", "sigma": 0.3},
      "registration": {"dist": "exponential", "mean": "3s"},
      "runtime_env_install": "90s", "replica_init": "5s"}},
  "apps": [{"id": "a", "gpu_memory_mb": 8000, "deploy_at": "0s"}],
  "actions": [{"at": "600s", "do": "shutdown"}]
})";

std::string run_to_trace(std::uint64_t seed, const std::string& name) {
  const testing_support::TestDir dir;
  const auto path = dir.file(name);
  Scenario sc = parse_scenario(Json::parse(kRandomScenario), "random.json");
  RunOptions opt;
  opt.seed = seed;
  opt.outputs.trace_path = path;
  run_scenario(sc, opt);
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::filesystem::remove(path);
  return ss.str();
}

std::vector<Json> lines(const std::string& text) {
  std::vector<Json> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(Json::parse(line));
  return out;
}

}  // namespace

TEST(Determinism, SameSeedGivesByteIdenticalTrace) {
  const std::string a = run_to_trace(7, "vramsim-det-a.jsonl");
  const std::string b = run_to_trace(7, "vramsim-det-b.jsonl");
  ASSERT_GT(a.size(), 1000u);
  EXPECT_EQ(a, b);
}

TEST(Determinism, OtherSeedChangesOnlyRandomFields) {
  const auto a = lines(run_to_trace(7, "vramsim-det-c.jsonl"));
  const auto b = lines(run_to_trace(8, "vramsim-det-d.jsonl"));
  ASSERT_EQ(a.size(), b.size());
  bool some_time_differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]["kind"], b[i]["kind"]) << "event " << i;
    some_time_differs = some_time_differs || a[i]["t"] != b[i]["t"];
    Json x = a[i], y = b[i];
    // "events" counts kernel events, which include polls whose number
    // depends on the drawn latencies.
    for (const char* k : {"t", "seed", "queue_wait_us", "idle_for_us", "events"}) {
      x.erase(k);
      y.erase(k);
    }
    EXPECT_EQ(x, y) << "event " << i << " (" << a[i]["kind"] << ")";
  }
  EXPECT_TRUE(some_time_differs);
}
