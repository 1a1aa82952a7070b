// The printed summary: outcomes per app, and VRAM booking never shown as
// free capacity where VRAM_MB is not advertised.
#include <gtest/gtest.h>

#include <sstream>

#include "runner/simulation.hpp"

using namespace vramsim;

namespace {
RunResult run_file(const std::string& name, const std::string& policies = "fixed") {
  Scenario sc = load_scenario(std::string(VRAMSIM_SOURCE_DIR) + "/scenarios/" + name);
  RunOptions opt;
  opt.policies = policies;
  return run_scenario(sc, opt);
}
}  // namespace

TEST(Summary, ZeroVramFieldsNeverReadAsFreeCapacity) {
  const RunResult r = run_file("status-denbi.json");
  std::ostringstream out;
  print_summary(r, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("VRAM booked: not tracked"), std::string::npos) << text;
  EXPECT_EQ(text.find("free"), std::string::npos) << text;
  EXPECT_EQ(text.find("booked: 0/0"), std::string::npos) << text;
  EXPECT_EQ(text.find("0 MB"), std::string::npos) << text;
}

TEST(Summary, BookedVramShownBesideTheDeviceFraction) {
  const RunResult r = run_file("status-europa.json");
  std::ostringstream out;
  print_summary(r, out);
  EXPECT_NE(out.str().find("GPU: 0.04/1 booked: 20480/24576 MB"), std::string::npos) << out.str();
  EXPECT_TRUE(r.all_held());
}

TEST(Summary, FailedExpectationSaysWhichAndWhy) {
  const RunResult r = run_file("admission-in-flight.json", "legacy");
  EXPECT_FALSE(r.all_held());
  std::ostringstream out;
  print_summary(r, out);
  EXPECT_NE(out.str().find("FAILED $.expect[0] app segmenter: admitted: rejected: Insufficient resources"),
            std::string::npos)
      << out.str();
}

TEST(Summary, OrphanedAllocationIsMeasuredAfterShutdown) {
  const RunResult legacy = run_file("shutdown-sweep.json", "legacy");
  const RunResult fixed = run_file("shutdown-sweep.json", "fixed");
  EXPECT_EQ(legacy.metrics.jobs_left, 1);
  EXPECT_DOUBLE_EQ(legacy.metrics.orphaned_job_seconds, 4 * 3600.0);  // the whole time limit
  EXPECT_EQ(fixed.metrics.jobs_left, 0);
  EXPECT_EQ(fixed.metrics.orphaned_job_seconds, 0);
}

TEST(Summary, CompareTablePutsRunsSideBySide) {
  std::vector<RunResult> runs = {run_file("admission-in-flight.json", "legacy"),
                                 run_file("admission-in-flight.json", "fixed")};
  std::ostringstream out;
  print_comparison(runs, out);
  const std::string t = out.str();
  EXPECT_NE(t.find("segmenter: admitted"), std::string::npos);
  EXPECT_NE(t.find("rejected"), std::string::npos);
  EXPECT_NE(t.find("66.000s"), std::string::npos) << t;
}
