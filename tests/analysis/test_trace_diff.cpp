// vramsim diff: phases aligned per app, and the first divergence of the
// event-kind sequences, on traces of the bundled cold start.
#include "tests/support/test_dir.hpp"
#include "analysis/trace_diff.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runner/simulation.hpp"

using namespace vramsim;

namespace {

std::vector<TraceEvent> cold_start_trace(const std::string& policies, const std::string& name) {
  const testing_support::TestDir dir;
  const auto path = dir.file(name);
  Scenario sc = load_scenario(std::string(VRAMSIM_SOURCE_DIR) + "/scenarios/cold-start-a100.json");
  RunOptions opt;
  opt.policies = policies;
  opt.outputs.trace_path = path;
  run_scenario(sc, opt);
  auto ev = read_trace(path);
  std::filesystem::remove(path);
  return ev;
}

const PhaseRow* row(const TraceDiff& d, const std::string& scope, const std::string& phase) {
  for (const auto& r : d.phases)
    if (r.scope == scope && r.phase == phase) return &r;
  return nullptr;
}

TEST(TraceDiff, ATraceAgainstItselfAgreesEverywhere) {
  const auto ev = cold_start_trace("fixed", "diff-self.jsonl");
  const TraceDiff d = diff_traces(ev, ev);
  EXPECT_FALSE(d.divergence.has_value());
  EXPECT_GT(d.compared, 20u);
  // The cold start's phases, as the scenario's latencies set them.
  const PhaseRow* queue = row(d, "vram-test", "SLURM queue wait");
  ASSERT_NE(queue, nullptr);
  EXPECT_EQ(*queue->a, 19 * kSecond);
  const PhaseRow* boot = row(d, "vram-test", "node boot + registration");
  ASSERT_NE(boot, nullptr);
  EXPECT_EQ(*boot->a, 36 * kSecond);
  const PhaseRow* env = row(d, "vram-test", "runtime env + replica init");
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(*env->a, 125 * kSecond);
  const PhaseRow* total = row(d, "vram-test", "deploy -> RUNNING");
  ASSERT_NE(total, nullptr);
  EXPECT_EQ(*total->a, 181 * kSecond);
  EXPECT_EQ(*total->b, 181 * kSecond);
  ASSERT_NE(row(d, "run", "shutdown"), nullptr);
}

TEST(TraceDiff, LegacyAgainstFixedDivergesAtTheAdmission) {
  const auto fixed = cold_start_trace("fixed", "diff-fixed.jsonl");
  const auto legacy = cold_start_trace("legacy", "diff-legacy.jsonl");
  const TraceDiff d = diff_traces(fixed, legacy);
  ASSERT_TRUE(d.divergence.has_value());
  ASSERT_TRUE(d.divergence->a && d.divergence->b);
  // Same kinds until the admission; then fixed places replicas, legacy fails the deploy.
  std::size_t admission = 0;
  for (std::size_t i = 0; i < fixed.size(); ++i)
    if (fixed[i].kind == TraceKind::admission) { admission = i; break; }
  EXPECT_GT(d.divergence->index, admission - 1);
  const PhaseRow* total = row(d, "vram-test", "deploy -> RUNNING");
  ASSERT_NE(total, nullptr);
  EXPECT_TRUE(total->a.has_value());
  EXPECT_FALSE(total->b.has_value()) << "legacy never reaches RUNNING";
  std::ostringstream out;
  print_trace_diff(d, "fixed", "legacy", out);
  EXPECT_NE(out.str().find("they diverge at event"), std::string::npos);
}

TEST(TraceDiff, WorldSpecificEventsDoNotCountAsDivergence) {
  auto a = cold_start_trace("fixed", "diff-ws.jsonl");
  auto b = a;
  TraceEvent extra;
  extra.t = b[5].t;
  extra.kind = TraceKind::agent_refused;
  extra.fields = {{"peer", "127.0.0.1:5"}, {"reason", "wrong hmac"}};
  b.insert(b.begin() + 5, extra);
  EXPECT_FALSE(diff_traces(a, b).divergence.has_value());
  b.erase(b.end() - 3, b.end());  // the run ends early
  const TraceDiff d = diff_traces(a, b);
  ASSERT_TRUE(d.divergence.has_value());
  EXPECT_TRUE(d.divergence->a.has_value());
  EXPECT_FALSE(d.divergence->b.has_value()) << "B ended first";
}

TEST(TraceDiff, MalformedTraceLineNamesTheFileAndLine) {
  const testing_support::TestDir dir;
  const auto path = dir.file("diff-bad.jsonl");
  {
    std::ofstream f(path);
    f << "{\"t\": 0, \"kind\": \"run_started\"}\n{\"t\": \"x\", \"kind\": 5}\n";
  }
  try {
    read_trace(path);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": line 2"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

}  // namespace
