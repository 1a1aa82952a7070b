// Runs that used to abort or to report success on a failed write: a time
// limit firing while a job completes its cancel, and outputs to a full disk.
#include "tests/support/test_dir.hpp"
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/output_file.hpp"
#include "runner/simulation.hpp"

using namespace vramsim;

namespace {

// Worker time limit 300 s, cancel latency 60 s, shutdown at 230 s: the
// graceful stop waits its 60 s grace (the cluster status it polls is frozen
// once shutdown stops the monitor), scancel goes out at 290 s, and the time
// limit (300 s) falls inside the cancel latency.
const char* kCancelDuringLimit = R"({
  "horizon": "20m",
  "cluster": {
    "max_workers": 1, "initial_workers": 1,
    "worker_defaults": {"time_limit": "300s"},
    "latency": {"cancel": "60s"}
  },
  "actions": [{"at": "230s", "do": "shutdown"}]
})";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(SimTimers, ATimeLimitDuringTheCancelLatencyDoesNotFire) {
  const Scenario sc = parse_scenario_text(kCancelDuringLimit, "case.json");
  for (const char* policies : {"fixed", "legacy"}) {
    RunOptions opt;
    opt.policies = policies;
    RunResult r;
    ASSERT_NO_THROW(r = run_scenario(sc, opt)) << policies;
    EXPECT_EQ(r.metrics.jobs_timeout, 0) << policies;
  }
  // Under fixed the scancel wins: the job ends CANCELLED at 350 s (290 s +
  // 60 s), after its 300 s limit would have passed.
  RunOptions opt;
  opt.policies = "fixed";
  const testing_support::TestDir dir;
  const auto trace = dir.file("cancel-limit.jsonl");
  opt.outputs.trace_path = trace;
  const RunResult r = run_scenario(sc, opt);
  EXPECT_EQ(r.metrics.jobs_cancelled, 1);
  const std::string text = slurp(trace);
  EXPECT_NE(text.find(R"("kind":"job_ended","job":"1000","state":"CANCELLED")"), std::string::npos) << text;
  EXPECT_EQ(text.find("TIMEOUT"), std::string::npos) << text;
  std::filesystem::remove(trace);
}

TEST(SimTimers, AnUncancelledJobStillTimesOut) {
  // The control: without the shutdown the same job reaches its limit.
  const Scenario sc = parse_scenario_text(R"({"horizon": "20m", "cluster": {"max_workers": 1,
      "initial_workers": 1, "worker_defaults": {"time_limit": "300s"}}})", "case.json");
  const RunResult r = run_scenario(sc, RunOptions{});
  EXPECT_EQ(r.metrics.jobs_timeout, 1);
}

TEST(Outputs, AFullDiskIsAnOutputErrorNamingThePath) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const Scenario sc = parse_scenario_text(R"({"horizon": "1m"})", "case.json");
  RunOptions trace;
  trace.outputs.trace_path = "/dev/full";
  try {
    run_scenario(sc, trace);
    FAIL() << "trace to /dev/full succeeded";
  } catch (const OutputError& e) {
    EXPECT_EQ(e.path(), "/dev/full");
    EXPECT_NE(std::string(e.what()).find("No space left"), std::string::npos) << e.what();
  }
  RunOptions csv;
  csv.outputs.status_every = 10 * kSecond;
  csv.outputs.status_csv_path = "/dev/full";
  EXPECT_THROW(run_scenario(sc, csv), OutputError);
  RunOptions json;
  json.outputs.status_at = {10 * kSecond};
  json.outputs.status_json_path = "/dev/full";
  EXPECT_THROW(run_scenario(sc, json), OutputError);
}

TEST(Outputs, AnUnopenablePathIsAnOutputError) {
  const Scenario sc = parse_scenario_text(R"({"horizon": "1m"})", "case.json");
  RunOptions opt;
  opt.outputs.trace_path = "/nonexistent-dir/for/sure/trace.jsonl";
  EXPECT_THROW(run_scenario(sc, opt), OutputError);
}

TEST(Outputs, ANonUtf8ScenarioPathStillWritesTheTrace) {
  // The path lands in run_started; the trace must not abort on it.
  const Scenario sc = parse_scenario_text(R"({"horizon": "1m"})", "bad-\xff-name.json");
  RunOptions opt;
  const testing_support::TestDir dir;
  const auto trace = dir.file("utf8.jsonl");
  opt.outputs.trace_path = trace;
  ASSERT_NO_THROW(run_scenario(sc, opt));
  const std::string text = slurp(trace);
  EXPECT_NE(text.find("bad-\xEF\xBF\xBD-name.json"), std::string::npos) << text;
  std::filesystem::remove(trace);
}
