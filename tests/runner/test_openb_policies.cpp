// The FGD paper's ordering (Weng et al., ATC '23) as this simulator gives
// it: at the same arrived workload, fgd leaves fewer GPUs fragmented, and at
// the end fewer unallocated, than best-fit (the paper's BestFit) and
// first-fit. On the excerpt the project ships
// (tests/scenarios/openb/excerpt-default-8: every 8th node and every 8th pod
// of the default list, tools/openb-excerpt) and, when the trace is beside
// the checkout, on the whole default list; on the gpuspec33 list (a third of
// the pods name GPU models) fgd leads best-fit, as in the paper, but not
// first-fit (docs/workloads-openb.md, "Placement policies against
// fragmentation").
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "analysis/report.hpp"
#include "runner/simulation.hpp"
#include "tests/support/test_dir.hpp"
#include "tests/support/sanitized.hpp"

using namespace vramsim;

namespace {

// One run per placement policy of the openb arrivals replay on these files;
// each run's --frag-csv read back.
std::map<std::string, FragSeries> runs(const std::string& nodes, const std::string& pods,
                                       const std::vector<std::string>& policies = {"first-fit", "best-fit", "fgd"}) {
  const testing_support::TestDir dir;
  const std::string path = dir.write(
      "case.json", R"({"cluster": {"mode": "static", "introspection": {"env_build": "0s", "duration": "0s"}},
                      "policies": {"preset": "fixed", "advertisement": "legacy"},
                      "workload": {"source": "openb", "nodes": ")" + nodes + R"(", "pods": ")" + pods + R"(",
                                   "replay": "arrivals", "interval": "1s", "samples": 0}})");
  const Scenario s = load_scenario(path);
  std::map<std::string, FragSeries> out;
  for (const auto& p : policies) {
    RunOptions o;
    o.policies = "fixed,advertisement=legacy,placement=" + p;
    o.outputs.frag_csv_path = dir.file("frag-" + p + ".csv");
    run_scenario(s, o);
    out[p] = read_frag_csv(o.outputs.frag_csv_path);
  }
  return out;
}

void expect_fgd_first(const std::map<std::string, FragSeries>& r,
                      const std::vector<std::string>& others = {"first-fit", "best-fit"}) {
  const auto frag90 = [&](const std::string& p) { return frag_at(r.at(p), 0.9).value_or(FragPoint{}).fragmented; };
  const auto end = [&](const std::string& p) { return r.at(p).points.back().unallocated; };
  for (const auto& p : others) {
    ASSERT_GE(r.at(p).points.back().arrived_share, 0.9) << p;
    EXPECT_LT(frag90("fgd"), frag90(p)) << "fragmented GPUs at 90% arrived, fgd against " << p;
    EXPECT_LT(end("fgd"), end(p)) << "unallocated GPUs at the end, fgd against " << p;
  }
}

}  // namespace

TEST(OpenbPolicies, FgdLeadsOnTheShippedExcerpt) {
  const std::string dir = std::string(VRAMSIM_SOURCE_DIR) + "/tests/scenarios/openb/excerpt-default-8";
  const auto r = runs(dir + "/nodes.csv", dir + "/pods.csv");
  expect_fgd_first(r);
  // The figures docs/workloads-openb.md gives for the excerpt.
  EXPECT_NEAR(frag_at(r.at("fgd"), 0.9)->fragmented, 44.0, 0.05);
  EXPECT_NEAR(r.at("fgd").points.back().unallocated, 49.8, 0.05);
  EXPECT_NEAR(r.at("first-fit").points.back().unallocated, 53.4, 0.05);
  EXPECT_NEAR(r.at("best-fit").points.back().unallocated, 64.9, 0.05);
}

// The whole default list: about 21 s of CPU in a release build, ten times
// that under the sanitizers, which leave it to the unsanitized build (the
// excerpt above runs the same code in both).
using testing_support::kSanitized;

namespace {
// The whole-trace files: $VRAMSIM_TRACES, else ../shared/data/traces beside
// the checkout.
std::string trace_file(const std::string& name) {
  const char* env = std::getenv("VRAMSIM_TRACES");
  return (std::filesystem::path(env ? env : std::string(VRAMSIM_SOURCE_DIR) + "/../shared/data/traces") /
          "alibaba-gpu-v2023" / name)
      .string();
}
// Why a whole-trace run of `pods` cannot run here; empty when it can.
std::string why_skip(const std::string& pods) {
  if (kSanitized) return "a whole-trace run, checked by the unsanitized build";
  if (!std::filesystem::exists(trace_file(pods))) return "the openb trace is absent: no " + trace_file(pods);
  return "";
}
}  // namespace

TEST(OpenbPolicies, FgdLeadsOnTheDefaultTrace) {
  if (const auto why = why_skip("openb_pod_list_default.csv"); !why.empty()) GTEST_SKIP() << why;
  expect_fgd_first(runs(trace_file("openb_node_list_all_node.csv"), trace_file("openb_pod_list_default.csv")));
}

// gpuspec33: fgd, measuring against typical tasks that carry their models,
// leads the paper's BestFit (first-fit, not in the paper, leads both: the
// docs say why). About 24 s in a release build.
TEST(OpenbPolicies, FgdLeadsBestFitOnTheGpuSpecTrace) {
  if (const auto why = why_skip("openb_pod_list_gpuspec33.csv"); !why.empty()) GTEST_SKIP() << why;
  expect_fgd_first(runs(trace_file("openb_node_list_all_node.csv"), trace_file("openb_pod_list_gpuspec33.csv"),
                        {"best-fit", "fgd"}),
                   {"best-fit"});
}
