// The Chrome Trace Event export: valid JSON with named tracks for apps, jobs
// and nodes, and the slices of the cold start where the trace puts them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "analysis/chrome_trace.hpp"
#include "runner/simulation.hpp"
#include "analysis/trace_diff.hpp"
#include "tests/support/test_dir.hpp"

using namespace vramsim;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Exported {
  Json doc;
  std::string text, trace_path;
};

// Written in the calling test's own folder (tests run in parallel).
Exported run_cold_start(const std::string& preset, const testing_support::TestDir& dir) {
  const Scenario sc = load_scenario(std::string(VRAMSIM_SOURCE_DIR) + "/scenarios/cold-start-a100.json");
  RunOptions opt;
  opt.policies = preset;
  opt.outputs.trace_path = dir.file(preset + ".jsonl");
  opt.outputs.chrome_trace_path = dir.file(preset + ".json");
  run_scenario(sc, opt);
  Exported e;
  e.text = slurp(opt.outputs.chrome_trace_path);
  e.doc = Json::parse(e.text);  // throws if it is not valid JSON
  e.trace_path = opt.outputs.trace_path;
  return e;
}

// (pid, tid) of the track a metadata event names.
std::map<std::string, std::pair<int, int>> tracks(const Json& doc) {
  std::map<std::string, std::pair<int, int>> out;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "M" && (e["name"] == "thread_name" || e["name"] == "process_name")) {
      const std::string prefix = e["name"] == "process_name" ? "process " : "";
      out[prefix + e["args"]["name"].get<std::string>()] = {e["pid"].get<int>(), e["tid"].get<int>()};
    }
  return out;
}

const Json* slice(const Json& doc, std::pair<int, int> track, const std::string& name) {
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == track.first && e["tid"] == track.second && e["name"] == name) return &e;
  return nullptr;
}

}  // namespace

TEST(ChromeTrace, ColdStartHasTracksAndSlices) {
  testing_support::TestDir dir;
  const Exported x = run_cold_start("fixed", dir);
  ASSERT_TRUE(x.doc.is_object());
  ASSERT_TRUE(x.doc["traceEvents"].is_array());
  EXPECT_EQ(x.doc["otherData"]["scenario"], "cold-start-a100");
  const auto t = tracks(x.doc);
  for (const std::string name : {"process apps", "process SLURM worker jobs", "process head (10.0.0.254)",
                                 "process node-1 (10.0.0.1, job 1000)", "job 1000", "vram-test", "vram-test#0"})
    EXPECT_TRUE(t.count(name)) << name;
  ASSERT_TRUE(t.count("job 1000") && t.count("vram-test") && t.count("vram-test#0"));
  // The job: queued from 1 s (the scale-up) to 20 s, then running until cancelled.
  const Json* queued = slice(x.doc, t.at("job 1000"), "queue wait");
  ASSERT_NE(queued, nullptr);
  EXPECT_EQ((*queued)["ts"], 1 * kSecond);
  EXPECT_EQ((*queued)["dur"], 19 * kSecond);
  const Json* job_running = slice(x.doc, t.at("job 1000"), "running");
  ASSERT_NE(job_running, nullptr);
  EXPECT_EQ((*job_running)["args"]["state"], "CANCELLED");
  // The replica: placed at 56 s when node-1 registered, running at 181 s.
  const Json* placed = slice(x.doc, t.at("vram-test#0"), "placed");
  ASSERT_NE(placed, nullptr);
  EXPECT_EQ((*placed)["ts"], 56 * kSecond);
  EXPECT_EQ((*placed)["dur"], 125 * kSecond);
  const Json* running = slice(x.doc, t.at("vram-test#0"), "running");
  ASSERT_NE(running, nullptr);
  EXPECT_EQ((*running)["ts"], 181 * kSecond);
  EXPECT_EQ((*running)["args"]["removed"], "app deleted");
  const Json* app_running = slice(x.doc, t.at("vram-test"), "RUNNING");
  ASSERT_NE(app_running, nullptr);
  EXPECT_EQ((*app_running)["ts"], 181 * kSecond);
  EXPECT_EQ(t.at("vram-test#0").first, t.at("process node-1 (10.0.0.1, job 1000)").first);

  // Slices on one track never overlap (viewers draw X events as a stack).
  std::map<std::pair<int, int>, std::vector<std::pair<std::int64_t, std::int64_t>>> spans;
  for (const auto& e : x.doc["traceEvents"])
    if (e["ph"] == "X") {
      ASSERT_GE(e["dur"].get<std::int64_t>(), 0) << e;
      spans[{e["pid"], e["tid"]}].push_back({e["ts"], e["ts"].get<std::int64_t>() + e["dur"].get<std::int64_t>()});
    }
  for (auto& [track, v] : spans) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) EXPECT_LE(v[i - 1].second, v[i].first) << track.first << "/" << track.second;
  }
}

TEST(ChromeTrace, RejectionIsAnInstantEvent) {
  testing_support::TestDir dir;
  const Exported x = run_cold_start("legacy", dir);
  const auto t = tracks(x.doc);
  int rejected = 0;
  for (const auto& e : x.doc["traceEvents"])
    if (e["ph"] == "i" && e["name"] == "rejected at admission") {
      ++rejected;
      EXPECT_EQ(e["ts"], 25 * kSecond);  // the check awaits the introspection: env 20 s, run 5 s
      EXPECT_EQ(std::make_pair(e["pid"].get<int>(), e["tid"].get<int>()), t.at("vram-test"));
      EXPECT_EQ(e["args"]["worker_jobs"], 1);
    }
  EXPECT_EQ(rejected, 1);
}

// One converter: the trace file converted afterwards gives the same bytes
// as the run's own export.
TEST(ChromeTrace, FromTraceFileEqualsTheRunsExport) {
  for (const std::string preset : {"legacy", "fixed"}) {
    testing_support::TestDir dir;
    const Exported x = run_cold_start(preset, dir);
    const std::string out = dir.file("from-file.json");
    write_chrome_trace(read_trace(x.trace_path), out);
    EXPECT_EQ(slurp(out), x.text) << preset;
  }
}

TEST(ChromeTrace, UnwritableFileIsAnOutputError) {
  EXPECT_THROW(write_chrome_trace({}, "/nonexistent-dir/x.json"), OutputError);
}
