// `vramsim explain`: the critical path from a trace file equals the one a run
// prints, and each blocking cause is named from the trace's facts.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "tests/support/test_dir.hpp"
#include "analysis/explain.hpp"
#include "runner/simulation.hpp"
#include "analysis/trace_diff.hpp"

using namespace vramsim;

namespace {

std::string printed(const CriticalPath& p) {
  std::ostringstream out;
  print_critical_path(p, out);
  return out.str();
}

std::vector<TraceEvent> parse(const std::string& text) {
  std::istringstream in(text);
  return parse_trace(in, "test.jsonl");
}

const AppExplanation& app_of(const Explanation& x, const std::string& id) {
  for (const auto& a : x.apps)
    if (a.app == id) return a;
  throw std::runtime_error("no app " + id);
}

std::vector<std::string> codes(const AppExplanation& a) {
  std::vector<std::string> out;
  for (const auto& c : a.causes) out.push_back(c.code);
  return out;
}

const char* kRunStarted =
    R"({"t":0,"kind":"run_started","scenario":"s","seed":1,"policies":{"admission":"legacy","advertisement":"legacy","autoscaler":"legacy","shutdown":"legacy","sizing":"legacy"}})"
    "\n";

}  // namespace

// Every bundled scenario under both presets: the path read back from the
// trace file is, line for line, the one `run --critical-path` computed from
// the run's memory; and an app has a path exactly when it reached RUNNING.
TEST(Explain, CriticalPathFromTraceFileEqualsTheRunsOwn) {
  namespace fs = std::filesystem;
  const testing_support::TestDir tmp;  // the test's own folder
  const fs::path dir = tmp.path();
  int paths = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(VRAMSIM_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".json") continue;
    const Scenario sc = load_scenario(entry.path().string());
    for (const std::string preset : {"legacy", "fixed"}) {
      SCOPED_TRACE(entry.path().filename().string() + " " + preset);
      RunOptions opt;
      opt.policies = preset;
      opt.outputs.critical_path = true;
      opt.outputs.trace_path = (dir / (entry.path().stem().string() + "." + preset + ".jsonl")).string();
      const RunResult r = run_scenario(sc, opt);
      const Explanation x = explain_trace(read_trace(opt.outputs.trace_path));
      for (const auto& p : r.critical_paths) {
        const AppExplanation& a = app_of(x, p.app);
        ASSERT_TRUE(a.path.has_value()) << p.app;
        EXPECT_EQ(printed(*a.path), printed(p));
        ++paths;
      }
      for (const auto& out : r.apps) {
        const AppExplanation& a = app_of(x, out.id);
        EXPECT_EQ(a.path.has_value(), out.time_to_running.has_value()) << out.id;
        EXPECT_EQ(a.state, out.final_state) << out.id;
        // An app that never ran has at least one blocking cause; one that ran has none.
        const bool blocked = !a.causes.empty() && a.causes.front().blocking;
        EXPECT_EQ(blocked, !a.path.has_value()) << out.id;
      }
    }
  }
  EXPECT_GE(paths, 10);
}

TEST(Explain, NeedsRunStartedFirst) {
  EXPECT_THROW(explain_trace(parse(R"({"t":0,"kind":"node_registered","node":"head"})" "\n")), ExplainError);
  EXPECT_THROW(explain_trace({}), ExplainError);
  try {
    explain_trace(parse(R"({"t":0,"kind":"deploy_requested","app":"a"})" "\n"));
  } catch (const ExplainError& e) {
    EXPECT_NE(std::string(e.what()).find("line 1: expected a run_started event first"), std::string::npos) << e.what();
  }
}

TEST(Explain, UnknownAppIsAnError) {
  const auto ev = parse(std::string(kRunStarted) + R"({"t":1,"kind":"deploy_requested","app":"a","replicas":1})" "\n");
  EXPECT_NO_THROW(explain_trace(ev, "a"));
  try {
    explain_trace(ev, "b");
    FAIL() << "no error";
  } catch (const ExplainError& e) {
    EXPECT_NE(std::string(e.what()).find("no app 'b'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("apps: a"), std::string::npos) << e.what();
  }
}

// The admission cause depends on the variant the run recorded: only legacy
// counts jobs in flight as used headroom.
TEST(Explain, AdmissionRejectionNamesTheVariant) {
  const std::string events =
      R"({"t":0,"kind":"deploy_requested","app":"a","gpu_memory_mb":8000,"replicas":1,"cpus":1.0})" "\n"
      R"({"t":1,"kind":"admission","app":"a","admitted":false,"reason":"insufficient","requested":{"cpus":1.0,"gpus":1.0,"memory":0.0},"worker_jobs":1,"unregistered_jobs":1,"max_workers":1,"message":"Insufficient"})" "\n"
      R"({"t":1,"kind":"app_state","app":"a","from":"NOT_STARTED","to":"DEPLOY_FAILED","reason":"x"})" "\n";
  const auto legacy = explain_trace(parse(kRunStarted + events));
  const auto& a = app_of(legacy, "a");
  ASSERT_FALSE(a.causes.empty());
  EXPECT_EQ(a.causes[0].code, "admission_counts_in_flight");
  EXPECT_EQ(a.causes[0].variant, "legacy");
  EXPECT_EQ(a.causes[0].sentence,
            "rejected at admission: worker_jobs=1 counted as used, though 1 of them had no registered node yet "
            "(capacity in flight) (admission=legacy)");
  std::string fixed_start = kRunStarted;
  fixed_start.replace(fixed_start.find(R"("admission":"legacy")"), 20, R"("admission":"fixed")");
  const auto fixed = explain_trace(parse(fixed_start + events));
  EXPECT_EQ(app_of(fixed, "a").causes[0].code, "admission_insufficient");
}

// A request larger than every node: pending forever, with the figures.
TEST(Explain, RequestLargerThanEveryNode) {
  const auto x = explain_trace(parse(std::string(kRunStarted) +
      R"({"t":0,"kind":"deploy_requested","app":"h","gpu_memory_mb":50000,"replicas":1,"cpus":1.0})" "\n"
      R"({"t":1,"kind":"admission","app":"h","admitted":true,"reason":"capacity_in_flight","requested":{"cpus":1.0,"gpus":0.01,"memory":0.0},"worker_jobs":1,"unregistered_jobs":1,"max_workers":1,"message":""})" "\n"
      R"({"t":1,"kind":"replicas_submitted","app":"h","replicas":1,"resources":{"CPU":1.0,"GPU":0.01,"VRAM_MB":50000.0}})" "\n"
      R"({"t":9,"kind":"node_registered","node":"node-1","job":"1000","ip":"x","resources":{"CPU":8.0,"GPU":1.0,"VRAM_MB":40960.0}})" "\n"));
  const auto& a = app_of(x, "h");
  ASSERT_EQ(codes(a), std::vector<std::string>{"exceeds_largest_node"});
  EXPECT_EQ(a.causes[0].sentence, "pending forever: needs VRAM_MB 50000, the largest node offers 40960");
  EXPECT_EQ(a.causes[0].needed, 50000);
  EXPECT_EQ(a.causes[0].offered, 40960);
  // The JSON carries the same as data.
  const Json j = explanation_json(x)["apps"][0]["causes"][0];
  EXPECT_EQ(j["code"], "exceeds_largest_node");
  EXPECT_EQ(j["resource"], "VRAM_MB");
  EXPECT_EQ(j["needed"], 50000.0);
  EXPECT_EQ(j["offered"], 40960.0);
  EXPECT_EQ(j["blocking"], true);
}

// A trace cut short (a live run stopped early) while the worker job is still
// queued: the app waits for that job, nothing is missing yet.
TEST(Explain, CutShortWhileTheWorkerIsQueued) {
  const auto x = explain_trace(parse(std::string(kRunStarted) +
      R"({"t":0,"kind":"deploy_requested","app":"a","gpu_memory_mb":8000,"replicas":1,"cpus":1.0})" "\n"
      R"({"t":1,"kind":"admission","app":"a","admitted":true,"reason":"capacity_in_flight","requested":{},"worker_jobs":1,"unregistered_jobs":1,"max_workers":1,"message":""})" "\n"
      R"({"t":1,"kind":"replicas_submitted","app":"a","replicas":1,"resources":{"CPU":1.0,"GPU":0.01,"VRAM_MB":8000.0}})" "\n"
      R"({"t":2,"kind":"job_submitted","job":"77","gpus":1})" "\n"));
  const auto& a = app_of(x, "a");
  ASSERT_EQ(codes(a), std::vector<std::string>{"waiting_for_worker"});
  EXPECT_EQ(a.causes[0].detail["jobs"], Json::array({"77"}));
  // Once the job has registered without VRAM_MB, that is the cause instead.
  const auto y = explain_trace(parse(std::string(kRunStarted) +
      R"({"t":0,"kind":"deploy_requested","app":"a","gpu_memory_mb":8000,"replicas":1,"cpus":1.0})" "\n"
      R"({"t":1,"kind":"replicas_submitted","app":"a","replicas":1,"resources":{"CPU":1.0,"GPU":0.01,"VRAM_MB":8000.0}})" "\n"
      R"({"t":1,"kind":"admission","app":"a","admitted":true,"reason":"capacity_in_flight","requested":{},"worker_jobs":1,"unregistered_jobs":1,"max_workers":1,"message":""})" "\n"
      R"({"t":2,"kind":"job_submitted","job":"77","gpus":1})" "\n"
      R"({"t":3,"kind":"node_advertised","job":"77","gpus":1,"resources":{},"notice":"nvidia-smi not found; starting without VRAM_MB"})" "\n"
      R"({"t":4,"kind":"node_registered","node":"node-1","job":"77","ip":"x","resources":{"CPU":8.0,"GPU":1.0}})" "\n"));
  const auto& b = app_of(y, "a");
  ASSERT_EQ(codes(b), std::vector<std::string>{"vram_not_advertised"});
  EXPECT_EQ(b.causes[0].sentence,
            "pending: needs VRAM_MB 8000; node-1 has a GPU but advertises no VRAM_MB (node-1: nvidia-smi not found; "
            "starting without VRAM_MB) (advertisement=legacy)");
}

// Fields of the wrong type (a trace from elsewhere) give an explanation
// with what can be read, never an exception.
TEST(Explain, WrongFieldTypesAreTolerated) {
  const auto x = explain_trace(parse(
      R"({"t":0,"kind":"run_started","policies":[1,2],"seed":"x"})" "\n"
      R"({"t":0,"kind":"deploy_requested","app":"a","replicas":"two","gpu_memory_mb":{}})" "\n"
      R"({"t":1,"kind":"sizing","app":"a","branch":"fraction","num_gpus":"0.2","vram_advertised":1})" "\n"
      R"({"t":1,"kind":"admission","app":"a","admitted":"yes","requested":3,"worker_jobs":"1"})" "\n"
      R"({"t":1,"kind":"replicas_submitted","app":"a","replicas":1,"resources":{"GPU":"1","CPU":null}})" "\n"
      R"({"t":2,"kind":"node_registered","node":7,"job":[],"resources":"none"})" "\n"
      R"({"t":3,"kind":"scale_up","gpus":0,"demand":{"GPU":0.5}})" "\n"
      R"({"t":3,"kind":"shutdown_done","jobs_left":[1,"2"]})" "\n"));
  ASSERT_EQ(x.apps.size(), 1u);
  EXPECT_FALSE(x.apps[0].path.has_value());
  std::ostringstream out;
  print_explanation(x, out);
  EXPECT_NE(out.str().find("app a: never reached RUNNING"), std::string::npos) << out.str();
  EXPECT_NO_THROW(explanation_json(x).dump());
}

TEST(Explain, TraceTimesMustBeInOrderAndBounded) {
  EXPECT_THROW(parse(std::string(kRunStarted) + R"({"t":-1,"kind":"status"})" "\n"), std::runtime_error);
  EXPECT_THROW(parse(std::string(kRunStarted) + R"({"t":18446744073709551615,"kind":"status"})" "\n"),
               std::runtime_error);
  try {
    parse(std::string(R"({"t":5,"kind":"run_started"})" "\n\n") + R"({"t":4,"kind":"status"})" "\n");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "test.jsonl: line 3: expected \"t\" >= 5 (the previous event's), got 4");
  }
}

// A kind the trace format does not declare is refused, naming the line.
TEST(Explain, AnUndeclaredEventKindIsRefused) {
  try {
    parse(std::string(kRunStarted) + R"({"t":5,"kind":"node_up"})" "\n");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "test.jsonl: line 2: unknown event kind \"node_up\" (docs/trace-format.md lists the kinds)");
  }
}
