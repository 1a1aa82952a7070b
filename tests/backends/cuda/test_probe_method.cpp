// The probe's measurement method on the CPU: which output elements are
// checked, the sampled reference against the full one, the tolerance on
// sampled elements, sample sizing, statistics and the SM clock parser.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "backends/cuda/fp16.hpp"
#include "backends/cuda/probe_method.hpp"
#include "backends/cuda/reference_gemm.hpp"
#include "backends/cuda/sm_clock.hpp"
#include "tests/backends/cuda/test_support.hpp"

namespace vramsim::gpu {
namespace {

TEST(SampleIndices, SortedDistinctWithBothEdges) {
  const auto idx = sample_indices(8192, 16, 0x5EED1);
  ASSERT_EQ(idx.size(), 16u);
  EXPECT_EQ(idx.front(), 0);
  EXPECT_EQ(idx.back(), 8191);
  EXPECT_TRUE(std::is_sorted(idx.begin(), idx.end()));
  EXPECT_EQ(std::set<std::int64_t>(idx.begin(), idx.end()).size(), idx.size());
  for (auto i : idx) EXPECT_TRUE(i >= 0 && i < 8192);
  // Deterministic for a seed, different across seeds.
  EXPECT_EQ(idx, sample_indices(8192, 16, 0x5EED1));
  EXPECT_NE(idx, sample_indices(8192, 16, 0x5EED2));
}

TEST(SampleIndices, SmallMatricesAreCheckedWhole) {
  EXPECT_EQ(sample_indices(5, 16, 1), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(sample_indices(7, 1, 1), (std::vector<std::int64_t>{0}));
  EXPECT_TRUE(sample_indices(0, 4, 1).empty());
}

TEST(SampledReference, AgreesWithTheFullReferenceGemm) {
  const std::int64_t n = 48;
  std::vector<std::uint16_t> a(n * n), b(n * n);
  fill_fp16(a, 11);
  fill_fp16(b, 22);
  const auto full = reference_gemm_fp16(n, a, b);
  const auto rows = sample_indices(n, 6, 3), cols = sample_indices(n, 5, 4);
  const auto sampled = sampled_reference(n, 11, 22, rows, cols);
  ASSERT_EQ(sampled.size(), rows.size() * cols.size());
  for (std::size_t ri = 0; ri < rows.size(); ++ri)
    for (std::size_t ci = 0; ci < cols.size(); ++ci)
      EXPECT_EQ(sampled[ri * cols.size() + ci], full[rows[ri] + cols[ci] * n]) << rows[ri] << "," << cols[ci];
}

TEST(CheckSampled, PassesFp16RoundedOutputAndCatchesATransposedOne) {
  const std::int64_t n = 64;
  const auto rows = sample_indices(n, 8, 1), cols = sample_indices(n, 8, 2);
  const auto ref = sampled_reference(n, 5, 6, rows, cols);
  // The device stores C in fp16: rounding the reference is within tolerance.
  std::vector<float> device(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) device[i] = half_to_float(float_to_half(ref[i]));
  const auto ok = check_sampled(device, ref, n, rows, cols);
  EXPECT_TRUE(ok.ok) << ok.message;
  EXPECT_EQ(ok.mismatches, 0);
  // C^T (a layout mistake) reads other elements: far over the tolerance.
  const auto transposed = sampled_reference(n, 5, 6, cols, rows);
  std::vector<float> wrong(ref.size());
  for (std::size_t ri = 0; ri < rows.size(); ++ri)
    for (std::size_t ci = 0; ci < cols.size(); ++ci) wrong[ri * cols.size() + ci] = transposed[ci * rows.size() + ri];
  const auto bad = check_sampled(wrong, ref, n, rows, cols);
  EXPECT_FALSE(bad.ok);
  EXPECT_GT(bad.mismatches, 0);
  EXPECT_NE(bad.message.find("correctness check failed"), std::string::npos) << bad.message;
  // The worst element is reported by its matrix indices.
  EXPECT_TRUE(std::count(rows.begin(), rows.end(), bad.worst_row) == 1);
  EXPECT_TRUE(std::count(cols.begin(), cols.end(), bad.worst_col) == 1);
}

TEST(CheckSampled, NonFiniteAndSizeMismatchFail) {
  const std::vector<std::int64_t> rows{0, 1}, cols{0};
  const std::vector<float> ref{1.0f, 2.0f};
  EXPECT_FALSE(check_sampled(std::vector<float>{NAN, 2.0f}, ref, 2, rows, cols).ok);
  EXPECT_FALSE(check_sampled(std::vector<float>{1.0f}, ref, 2, rows, cols).ok);
}

TEST(IterationsFor, EachSampleLastsAtLeastTheMinimum) {
  EXPECT_EQ(iterations_for(1.4, 200.0, 10), 143);    // ceil(200 / 1.4)
  EXPECT_EQ(iterations_for(50.0, 200.0, 10), 10);    // the GEMM minimum wins
  EXPECT_EQ(iterations_for(0.0, 200.0, 3), 3);       // no calibration: the minimum
  EXPECT_EQ(iterations_for(1e-9, 200.0, 1), 1000000);  // capped
  EXPECT_GE(iterations_for(1.4, 200.0, 1) * 1.4, 200.0);
}

TEST(Summarize, MedianMinMaxAndSpread) {
  const auto s = summarize({250.0, 240.0, 260.0, 255.0, 245.0});
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.median, 250.0);
  EXPECT_DOUBLE_EQ(s.min, 240.0);
  EXPECT_DOUBLE_EQ(s.max, 260.0);
  EXPECT_DOUBLE_EQ(s.spread_pct, 8.0);
  EXPECT_DOUBLE_EQ(summarize({1.0, 3.0, 2.0, 10.0}).median, 2.5);  // even count: the mean of the middle two
  EXPECT_EQ(summarize({}).count, 0);
}

TEST(SmClock, ParsesNvidiaSmiOutput) {
  EXPECT_EQ(parse_sm_clock_mhz("1980\n"), 1980);
  EXPECT_EQ(parse_sm_clock_mhz(" 1410 MHz\n1395\n"), 1410);  // first device's line
  EXPECT_FALSE(parse_sm_clock_mhz("[N/A]\n"));
  EXPECT_FALSE(parse_sm_clock_mhz("[Not Supported]"));
  EXPECT_FALSE(parse_sm_clock_mhz(""));
  EXPECT_FALSE(parse_sm_clock_mhz("0\n"));
  EXPECT_FALSE(parse_sm_clock_mhz("12a4"));
  EXPECT_FALSE(parse_sm_clock_mhz("99999999999999"));
}

// Answers only the expected query for the expected device.
constexpr const char* kFakeSmi =
    "#!/bin/sh\n"
    "[ \"$1\" = --query-gpu=clocks.sm ] && [ \"$3\" = --id=00000000:1B:00.0 ] && echo 1755 && exit 0\n"
    "exit 6\n";

TEST(SmClock, QueriesAFakeNvidiaSmi) {
  test_support::TempDir dir;
  const auto smi = dir.file("nvidia-smi");
  test_support::write_file(smi, kFakeSmi, 0755);
  EXPECT_EQ(query_sm_clock_mhz("00000000:1B:00.0", smi), 1755);
  EXPECT_FALSE(query_sm_clock_mhz("00000000:3B:00.0", smi));   // nvidia-smi fails
  EXPECT_FALSE(query_sm_clock_mhz("0000;rm -rf x", smi));      // refused before the shell
  EXPECT_FALSE(query_sm_clock_mhz("00000000:1B:00.0", dir.file("absent")));
}

TEST(SmClockReader, FallsBackToNvidiaSmiWhenNvmlCannotBeLoaded) {
  test_support::TempDir dir;
  const auto smi = dir.file("nvidia-smi");
  test_support::write_file(smi, kFakeSmi, 0755);
  test_support::ScopedEnv nvml(kNvmlEnv, dir.file("libnvidia-ml.so.1"));  // no such file
  SmClockReader reader("00000000:1B:00.0", smi);
  EXPECT_EQ(reader.source(), "nvidia-smi");
  EXPECT_NE(reader.nvml_error().find("libnvidia-ml.so.1"), std::string::npos) << reader.nvml_error();
  EXPECT_EQ(reader.read(), 1755);
}

TEST(SmClockReader, ALibraryWithoutNvmlIsNotUsed) {
  test_support::ScopedEnv nvml(kNvmlEnv, "libm.so.6");  // loads, has no NVML entry points
  SmClockReader reader("00000000:1B:00.0", "/nonexistent/nvidia-smi");
  EXPECT_EQ(reader.source(), "nvidia-smi");
  EXPECT_NE(reader.nvml_error().find("lacks an NVML entry point"), std::string::npos) << reader.nvml_error();
  EXPECT_FALSE(reader.read());
}

TEST(SmClockReader, AReadingCountsOnlyInsideTheTimedWork) {
  EXPECT_TRUE(clock_reading_inside(true, false));
  EXPECT_FALSE(clock_reading_inside(false, false));  // read before the sample began
  EXPECT_FALSE(clock_reading_inside(true, true));    // returned after it ended
  EXPECT_FALSE(clock_reading_inside(false, true));
}

TEST(DeviceMemory, TheTimedRunNeedsThreeMatricesAndTheWorkspace) {
  EXPECT_EQ(timed_run_bytes(8192, 0), std::size_t{3} * 8192 * 8192 * 2);  // 384 MiB
  EXPECT_EQ(timed_run_bytes(8192, 1 << 20), std::size_t{3} * 8192 * 8192 * 2 + (1 << 20));
  EXPECT_FALSE(check_fits(8192, 0, std::size_t{384} << 20));
  const auto err = check_fits(16384, std::size_t{32} << 20, std::size_t{1000} << 20);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->kind, ErrorKind::OutOfMemory);
  EXPECT_EQ(static_cast<int>(exit_code_for(err->kind)), 6);
  EXPECT_EQ(err->message, "out of device memory: n=16384 needs 1568 MiB, 1000 MiB free");
}

}  // namespace
}  // namespace vramsim::gpu
