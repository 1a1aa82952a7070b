// tools/bench-probe against a fake probe (table and percentages) and against
// the real binary where no device is visible (status and message pass through).

#include <gtest/gtest.h>

#include <string>

#include "backends/cuda/gpu_detector.hpp"
#include "tests/backends/cuda/test_support.hpp"

#ifdef VRAMSIM_SOURCE_RELATIVE

namespace vramsim::gpu {
namespace {

using test_support::lines_of;
using test_support::run_command;
using test_support::shell_quote;
using test_support::TempDir;
using test_support::write_file;

// Answers --peak-for from a one-entry table and reports n / 10 + 0.5 TFLOPS.
constexpr const char* kFakeProbe = R"(#!/bin/sh
if [ "$1" = "--peak-for" ]; then
  case "$2" in
    *H200*) echo "{\"name\":\"$2\",\"dense_fp16_tflops\":989.4}" ;;
    *) echo "{\"name\":\"$2\",\"dense_fp16_tflops\":null}" ;;
  esac
  exit 0
fi
[ "$1" = "--n" ] || exit 2
echo "{\"gpu\":\"${FAKE_GPU:-NVIDIA H200}\",\"gpu_total_mb\":143771,\"visible_devices\":\"\",\"matmul_tflops\":$(($2 / 10)).5,\"peak_alloc_mb\":416,\"n\":$2,\"iterations\":10}"
)";

std::string bench(const std::string& env) { return env + " " + shell_quote(test_support::source_root() + "/tools/bench-probe"); }

TEST(BenchScript, PrintsTflopsAndPercentOfPeakForEachSize) {
  TempDir dir;
  write_file(dir.file("probe"), kFakeProbe, 0755);
  const auto r = run_command(bench("VRAMSIM_PROBE=" + shell_quote(dir.file("probe"))));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto lines = lines_of(r.output);
  ASSERT_EQ(lines.size(), 5u) << r.output;
  EXPECT_NE(lines[0].find("TFLOPS"), std::string::npos);
  EXPECT_NE(lines[0].find("% of peak"), std::string::npos);
  EXPECT_EQ(lines[1], "4096         409.5        989.4       41.4  NVIDIA H200");
  EXPECT_EQ(lines[2], "8192         819.5        989.4       82.8  NVIDIA H200");
  EXPECT_EQ(lines[3], "16384       1638.5        989.4      165.6  NVIDIA H200");
  EXPECT_NE(lines[4].find("met (82.8%)"), std::string::npos) << lines[4];
}

TEST(BenchScript, UnknownDeviceHasNoPercentUnlessAPeakIsGiven) {
  TempDir dir;
  write_file(dir.file("probe"), kFakeProbe, 0755);
  const std::string env = "FAKE_GPU='Mystery GPU' VRAMSIM_BENCH_SIZES=8192 VRAMSIM_PROBE=" + shell_quote(dir.file("probe"));
  auto r = run_command(bench(env));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("n/a"), std::string::npos) << r.output;
  r = run_command(bench("VRAMSIM_PEAK_TFLOPS=1000 " + env));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("82.0"), std::string::npos) << r.output;
}

TEST(BenchScript, MissingProbeIsStatusOne) {
  const auto r = run_command(bench("VRAMSIM_PROBE=/nonexistent/vramsim-probe"));
  EXPECT_EQ(r.status, 1) << r.output;
}

#ifdef VRAMSIM_PROBE_RELATIVE
TEST(BenchScript, PassesTheProbesNoDeviceStatusAndMessageThrough) {
  if (cuda_built_in()) {
    const auto inv = make_default_detector()->detect();
    if (inv && !inv->devices.empty()) GTEST_SKIP() << "a CUDA device is visible";
  }
  const auto r = run_command(bench("VRAMSIM_PROBE=" + shell_quote(test_support::probe_binary())));
  EXPECT_EQ(r.status, 3) << r.output;
  ASSERT_EQ(lines_of(r.output).size(), 1u) << r.output;
  EXPECT_EQ(r.output.rfind("no CUDA device visible: ", 0), 0u) << r.output;
}
#endif

}  // namespace
}  // namespace vramsim::gpu

#endif  // VRAMSIM_SOURCE_RELATIVE
