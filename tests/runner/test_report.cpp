#include "analysis/report.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace vramsim {
namespace {

TraceEvent ev(SimTime t, const std::string& kind, Json fields = Json::object()) {
  return TraceEvent{t, kind, std::move(fields)};
}

std::string temp_file(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / ("vramsim-report-" + name);
  std::ofstream(p) << text;
  return p.string();
}

TEST(Report, PolicyLabelNamesThePresetOrTheMix) {
  EXPECT_EQ(policy_label(Json{{"admission", "legacy"}, {"autoscaler", "legacy"}}), "legacy");
  EXPECT_EQ(policy_label(Json{{"admission", "legacy"}, {"autoscaler", "fixed"}}), "admission=legacy,autoscaler=fixed");
  EXPECT_EQ(policy_label(Json()), "default");
}

TEST(Report, TimeToRunningFromTheFirstDeployToTheFirstRunning) {
  const std::vector<TraceEvent> events = {
      ev(0, "run_started", {{"scenario", "s"}, {"seed", 3}, {"policies", {{"a", "fixed"}}}}),
      ev(10'000'000, "deploy_requested", {{"app", "x"}}),
      ev(12'000'000, "deploy_requested", {{"app", "y"}}),
      ev(20'000'000, "deploy_requested", {{"app", "x"}}),  // a redeploy: the first request counts
      ev(70'500'000, "app_state", {{"app", "x"}, {"to", "RUNNING"}}),
      ev(90'000'000, "app_state", {{"app", "x"}, {"to", "RUNNING"}}),
      ev(95'000'000, "app_state", {{"app", "y"}, {"to", "DEPLOY_FAILED"}})};
  const TracedRun r = traced_run("t.jsonl", events);
  EXPECT_EQ(r.scenario, "s");
  EXPECT_EQ(r.seed, 3u);
  EXPECT_EQ(r.policies, "fixed");
  ASSERT_EQ(r.apps.size(), 2u);
  EXPECT_EQ(r.apps[0].app, "x");
  ASSERT_TRUE(r.apps[0].to_running_s);
  EXPECT_DOUBLE_EQ(*r.apps[0].to_running_s, 60.5);
  EXPECT_FALSE(r.apps[1].to_running_s) << "y never ran";
  EXPECT_THROW(traced_run("t.jsonl", {ev(0, "deploy_requested", {{"app", "x"}})}), ReportInputError);
}

TEST(Report, EcdfCountsAppsThatNeverRanInTheTotal) {
  const auto c = ecdf({30, 10, 20}, 4);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0], std::make_pair(10.0, 0.25));
  EXPECT_EQ(c[2], std::make_pair(30.0, 0.75));
  EXPECT_TRUE(ecdf({}, 0).empty());
  EXPECT_EQ(percentile({5, 1, 4, 2, 3}, 50), 3);
  EXPECT_EQ(percentile({5, 1, 4, 2, 3}, 95), 5);
  EXPECT_EQ(percentile({7}, 1), 7);
}

TEST(Report, StatusTimelinePerNodeInFirstSeenOrder) {
  const auto path = temp_file("timeline.csv",
                              "time_s,node,used_gpu,used_vram_mb,total_vram_mb,used_cpu\n"
                              "10.000,node-2,0,0,81920,0\n10.000,node-1,1,8000,81920,1\n"
                              "20.000,node-2,1,16000,81920,1\n20.000,node-1,0,0,81920,0\n");
  const auto s = read_status_timeline(path);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].node, "node-2");
  EXPECT_EQ(s[0].peak, 16000);
  ASSERT_EQ(s[1].points.size(), 2u);
  EXPECT_EQ(s[1].points[0], std::make_pair(10.0, 8000.0));
  const auto bad = temp_file("timeline-bad.csv",
                             "time_s,node,used_gpu,used_vram_mb,total_vram_mb,used_cpu\n10.000,node-1,0,lots,0,0\n");
  try {
    read_status_timeline(bad);
    FAIL() << "a non-number was read";
  } catch (const ReportInputError& e) {
    EXPECT_NE(std::string(e.what()).find("timeline-bad.csv: line 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("used_vram_mb"), std::string::npos) << e.what();
  }
}

TEST(Report, SweepCurveIsTheMeanOverSeedsPerValue) {
  const auto path = temp_file("sweep.csv",
                              "max_workers,seed,held,p95_s,note\n"
                              "2,1,true,100,a\n2,2,true,200,b\n1,1,false,50,c\n1,2,false,,d\n");
  const SweepTable t = read_sweep_csv(path);
  EXPECT_EQ(t.params, std::vector<std::string>{"max_workers"});
  EXPECT_EQ(t.metrics, std::vector<std::string>{"p95_s"}) << "only columns with numbers are metrics";
  const auto c = sweep_curve(t, "max_workers", "p95_s");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0], std::make_pair(std::string("2"), 150.0));
  EXPECT_EQ(c[1], std::make_pair(std::string("1"), 50.0)) << "an empty cell is not a zero";
  EXPECT_THROW(read_sweep_csv(temp_file("noseed.csv", "a,b\n1,2\n")), ReportInputError);
  try {
    read_sweep_csv(temp_file("short.csv", "p,seed,m\n1,1\n"));
    FAIL() << "a short row was read";
  } catch (const ReportInputError& e) {
    EXPECT_NE(std::string(e.what()).find("short.csv: line 2: expected 3 columns, found 2"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace vramsim

namespace vramsim {
namespace {

TEST(Report, SweepCurvesOnePerValueOfTheOtherParameters) {
  const auto path = temp_file("sweep2.csv",
                              "max_workers,policies,seed,p95_s\n"
                              "1,legacy,1,10\n1,legacy,2,20\n1,fixed,1,5\n"
                              "2,legacy,1,4\n2,fixed,1,2\n2,fixed,2,4\n");
  const SweepTable t = read_sweep_csv(path);
  const auto c = sweep_curves(t, "max_workers", "p95_s");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].label, "policies=legacy");
  EXPECT_EQ(c[0].points, (std::vector<std::pair<std::string, double>>{{"1", 15.0}, {"2", 4.0}}));
  EXPECT_EQ(c[1].label, "policies=fixed");
  EXPECT_EQ(c[1].points, (std::vector<std::pair<std::string, double>>{{"1", 5.0}, {"2", 3.0}}));
  const auto single = sweep_curves(read_sweep_csv(temp_file("sweep1.csv", "n,seed,m\n1,1,2\n2,1,3\n")), "n", "m");
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].label, "");
}

}  // namespace
}  // namespace vramsim
