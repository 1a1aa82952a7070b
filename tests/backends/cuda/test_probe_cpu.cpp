// CPU-side probe code: options, report JSON, fp16, reference GEMM, tolerance,
// throughput and the peak table. Runs everywhere.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "backends/cuda/error.hpp"
#include "backends/cuda/fp16.hpp"
#include "backends/cuda/json_line.hpp"
#include "backends/cuda/probe_options.hpp"
#include "backends/cuda/probe_report.hpp"
#include "backends/cuda/reference_gemm.hpp"
#include "backends/cuda/throughput.hpp"

namespace vramsim::gpu {
namespace {

// ---- options -------------------------------------------------------------

TEST(ProbeOptions, DefaultsMatchTheDocumentedCommandLine) {
  const ProbeOptions o;
  EXPECT_EQ(o.n, 8192);
  EXPECT_EQ(o.iterations, 10);
  EXPECT_EQ(o.warmup, 3);
  EXPECT_EQ(o.check_n, 256);
  // At least 5 samples of at least 200 ms after a 2 s warm-up.
  EXPECT_EQ(o.samples, 5);
  EXPECT_DOUBLE_EQ(o.sample_ms, 200.0);
  EXPECT_DOUBLE_EQ(o.warmup_ms, 2000.0);
  EXPECT_EQ(o.check_samples, 16);
  EXPECT_FALSE(validate(o).has_value());
}

TEST(ProbeOptions, AcceptsAnyPositiveN) {
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{4097}, std::int64_t{16384}, kMaxN}) {
    ProbeOptions o;
    o.n = n;
    EXPECT_FALSE(validate(o).has_value()) << n;
  }
}

TEST(ProbeOptions, RejectsBadValuesWithAMessageNamingTheField) {
  struct Case {
    ProbeOptions options;
    std::string needle;
  };
  std::vector<Case> cases;
  auto with = [](auto mutate) {
    ProbeOptions o;
    mutate(o);
    return o;
  };
  cases.push_back({with([](ProbeOptions& o) { o.n = 0; }), "n must be"});
  cases.push_back({with([](ProbeOptions& o) { o.n = -5; }), "n must be"});
  cases.push_back({with([](ProbeOptions& o) { o.n = kMaxN + 1; }), "n must be"});
  cases.push_back({with([](ProbeOptions& o) { o.iterations = 0; }), "iterations must be >= 1"});
  cases.push_back({with([](ProbeOptions& o) { o.warmup = -1; }), "warmup must be >= 0"});
  cases.push_back({with([](ProbeOptions& o) { o.check_n = 0; }), "check-n must be"});
  cases.push_back({with([](ProbeOptions& o) { o.check_n = kMaxCheckN + 1; }), "check-n must be"});
  cases.push_back({with([](ProbeOptions& o) { o.samples = 0; }), "samples must be"});
  cases.push_back({with([](ProbeOptions& o) { o.sample_ms = 0; }), "sample-ms must be"});
  cases.push_back({with([](ProbeOptions& o) { o.sample_ms = std::nan(""); }), "sample-ms must be"});
  cases.push_back({with([](ProbeOptions& o) { o.warmup_ms = -1; }), "warmup-ms must be"});
  cases.push_back({with([](ProbeOptions& o) { o.check_samples = 0; }), "check-samples must be"});
  for (const auto& c : cases) {
    const auto err = validate(c.options);
    ASSERT_TRUE(err.has_value()) << c.needle;
    EXPECT_EQ(err->kind, ErrorKind::InvalidArgument);
    EXPECT_NE(err->message.find(c.needle), std::string::npos) << err->message;
  }
}

TEST(ProbeOptions, ZeroWarmupIsAllowed) {
  ProbeOptions o;
  o.warmup = 0;
  EXPECT_FALSE(validate(o).has_value());
}

TEST(ExitCodes, EachErrorKindHasItsDocumentedStatus) {
  EXPECT_EQ(static_cast<int>(exit_code_for(ErrorKind::InvalidArgument)), 2);
  EXPECT_EQ(static_cast<int>(exit_code_for(ErrorKind::NoDevice)), 3);
  EXPECT_EQ(static_cast<int>(exit_code_for(ErrorKind::CorrectnessFailed)), 4);
  EXPECT_EQ(static_cast<int>(exit_code_for(ErrorKind::CudaFailure)), 5);
  EXPECT_EQ(static_cast<int>(exit_code_for(ErrorKind::DetectionFailed)), 5);
  EXPECT_EQ(static_cast<int>(exit_code_for(ErrorKind::OutOfMemory)), 6);
}

TEST(ExitCodes, NoDeviceErrorsStartWithTheFixedLine) {
  const auto e = no_device_error("because");
  EXPECT_EQ(e.kind, ErrorKind::NoDevice);
  EXPECT_EQ(e.message, "no CUDA device visible: because");
}

// ---- report JSON ---------------------------------------------------------

// Invented figures that agree with each other: 46 GEMMs of 2 * 8192^3 FLOP
// in 202.15 ms are 250.2 TFLOPS; A, B, C (384 MiB) and a 32 MiB workspace.
ProbeReport reference_like_report() {
  ProbeReport r;
  r.gpu = "NVIDIA A100-SXM4-40GB";
  r.gpu_total_mb = 40440;
  r.visible_devices = "0";
  r.matmul_tflops = 250.2371;
  r.peak_alloc_mb = 416;
  r.n = 8192;
  r.iterations = 46;
  r.samples = 5;
  r.tflops_min = 248.04;
  r.tflops_max = 251.96;
  r.spread_pct = 1.5666;
  r.sample_ms = 202.06;
  r.warmup_ms = 2003.1;
  r.sm_clock_mhz = 1410;
  r.checked_elements = 256;
  r.sm_clock_source = "nvml";
  return r;
}

TEST(ProbeReportJson, KeysComeInTheReferenceOrder) {
  const auto j = to_json(reference_like_report());
  std::vector<std::string> keys;
  for (const auto& item : j.items()) keys.push_back(item.key());
  // The reference system's keys first, then the measurement method's.
  const std::vector<std::string> expected = {
      "gpu",        "gpu_total_mb", "visible_devices", "matmul_tflops", "peak_alloc_mb", "n",
      "iterations", "samples",      "tflops_min",      "tflops_max",    "spread_pct",    "sample_ms",
      "warmup_ms",  "sm_clock_mhz", "checked_elements", "sm_clock_source"};
  EXPECT_EQ(keys, expected);
}

TEST(ProbeReportJson, ValueTypesAndRounding) {
  const auto j = to_json(reference_like_report());
  EXPECT_TRUE(j["gpu"].is_string());
  EXPECT_TRUE(j["gpu_total_mb"].is_number_integer());
  EXPECT_TRUE(j["visible_devices"].is_string());
  EXPECT_TRUE(j["matmul_tflops"].is_number_float());
  EXPECT_TRUE(j["peak_alloc_mb"].is_number_integer());
  EXPECT_TRUE(j["n"].is_number_integer());
  EXPECT_TRUE(j["iterations"].is_number_integer());
  EXPECT_EQ(j.dump(),
            R"({"gpu":"NVIDIA A100-SXM4-40GB","gpu_total_mb":40440,"visible_devices":"0",)"
            R"("matmul_tflops":250.2,"peak_alloc_mb":416,"n":8192,"iterations":46,"samples":5,)"
            R"("tflops_min":248.0,"tflops_max":252.0,"spread_pct":1.6,"sample_ms":202.1,"warmup_ms":2003.1,)"
            R"("sm_clock_mhz":1410,"checked_elements":256,"sm_clock_source":"nvml"})");
  ProbeReport no_clock = reference_like_report();
  no_clock.sm_clock_mhz.reset();
  EXPECT_TRUE(to_json(no_clock)["sm_clock_mhz"].is_null());
}

TEST(ProbeReportJson, RoundsTflopsToOneDecimal) {
  EXPECT_DOUBLE_EQ(round_tenth(250.24), 250.2);
  EXPECT_DOUBLE_EQ(round_tenth(250.25), 250.3);
  EXPECT_DOUBLE_EQ(round_tenth(0.04), 0.0);
  EXPECT_DOUBLE_EQ(round_tenth(692.66), 692.7);
}

TEST(ProbeReportJson, ReadsTheReferenceSystemsOutput) {
  // The reference system omits n and iterations.
  const auto j = nlohmann::json::parse(
      R"({"gpu": "NVIDIA A100-SXM4-40GB", "gpu_total_mb": 40440, "visible_devices": "0",
          "matmul_tflops": 250.2, "peak_alloc_mb": 520})");
  const auto r = report_from_json(j);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->gpu, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(r->gpu_total_mb, 40440);
  EXPECT_EQ(r->visible_devices, "0");
  EXPECT_DOUBLE_EQ(r->matmul_tflops, 250.2);
  EXPECT_EQ(r->peak_alloc_mb, 520);
  EXPECT_EQ(r->n, 0);
  EXPECT_EQ(r->iterations, 0);
  EXPECT_EQ(r->samples, 0);
  EXPECT_FALSE(r->sm_clock_mhz.has_value());
}

TEST(ProbeReportJson, RoundTrips) {
  const auto original = reference_like_report();
  const auto back = report_from_json(nlohmann::json::parse(to_json(original).dump()));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->gpu, original.gpu);
  EXPECT_EQ(back->n, 8192);
  EXPECT_EQ(back->iterations, 46);
  EXPECT_DOUBLE_EQ(back->matmul_tflops, 250.2);
  EXPECT_EQ(back->samples, 5);
  EXPECT_DOUBLE_EQ(back->tflops_min, 248.0);
  EXPECT_DOUBLE_EQ(back->spread_pct, 1.6);
  EXPECT_EQ(back->sm_clock_mhz, 1410);
  EXPECT_EQ(back->checked_elements, 256);
  EXPECT_EQ(back->sm_clock_source, "nvml");
}

// The probe prints report_json's line (no JSON library); the agent's
// nlohmann view must be the same text.
TEST(ProbeReportJson, TheLineAndTheNlohmannViewAgree) {
  ProbeReport r = reference_like_report();
  EXPECT_EQ(report_json(r), to_json(r).dump());
  r.gpu = "odd \"name\"\twith\\ escapes\x01";
  r.tflops_max = 312.0;  // a whole double prints as 312.0
  r.sm_clock_mhz.reset();
  r.sm_clock_source = "";
  EXPECT_EQ(report_json(r), to_json(r).dump());
  EXPECT_NE(report_json(r).find("\"tflops_max\":312.0,"), std::string::npos) << report_json(r);
  EXPECT_NE(report_json(r).find("\"sm_clock_mhz\":null,"), std::string::npos) << report_json(r);
}

TEST(JsonLine, NumbersPrintAsNlohmannPrintsThem) {
  for (double v : {0.0, -0.0, 1.0, 250.2, 989.4, 362.05, 1e-7, 123456789.0, 1e21, -3.5, 0.1 + 0.2}) {
    EXPECT_EQ(json_number(v), nlohmann::json(v).dump()) << v;
  }
  EXPECT_EQ(json_number(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(json_number(std::nan("")), "null");
  EXPECT_EQ(json_string("a\"b\\c\n\x1f"), nlohmann::json("a\"b\\c\n\x1f").dump());
}

TEST(ProbeReportJson, RejectsWrongShapes) {
  EXPECT_FALSE(report_from_json(nlohmann::json::array()));
  EXPECT_FALSE(report_from_json(nlohmann::json::parse(R"({"gpu_total_mb": 1})")));
  auto j = nlohmann::json::parse(to_json(reference_like_report()).dump());
  j["gpu_total_mb"] = "40440";
  const auto r = report_from_json(j);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("gpu_total_mb"), std::string::npos);
}

// ---- fp16 ----------------------------------------------------------------

TEST(Fp16, KnownValues) {
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(0.1f), 0x2E66);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);  // rounds up to infinity
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Fp16, RoundsToNearestEven) {
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // tie -> even
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie -> even (up)
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3C01);
}

TEST(Fp16, EveryFiniteHalfRoundTrips) {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float f = half_to_float(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_half(f), h) << std::hex << bits;
  }
}

// ---- inputs, reference GEMM and tolerance --------------------------------

TEST(ReferenceGemm, InputsAreDeterministicExactAndInRange) {
  std::set<std::uint16_t> distinct;
  for (std::uint64_t i = 0; i < 4096; ++i) {
    const auto h = fill_value(42, i);
    EXPECT_EQ(h, fill_value(42, i));
    const float v = half_to_float(h);
    ASSERT_LE(std::fabs(v), 1.0f);
    EXPECT_EQ(v * 1024.0f, std::round(v * 1024.0f));  // k / 1024 exactly
    distinct.insert(h);
  }
  EXPECT_GT(distinct.size(), 1000u);
  int same = 0;
  for (std::uint64_t i = 0; i < 256; ++i) same += fill_value(1, i) == fill_value(2, i) ? 1 : 0;
  EXPECT_LT(same, 16);
}

TEST(ReferenceGemm, ChunkedFillMatchesWholeFill) {
  std::vector<std::uint16_t> whole(1000), chunked(1000);
  fill_fp16(whole, 9);
  fill_fp16(std::span(chunked.data(), 300), 9, 0);
  fill_fp16(std::span(chunked.data() + 300, 700), 9, 300);
  EXPECT_EQ(whole, chunked);
}

TEST(ReferenceGemm, TwoByTwoColumnMajor) {
  auto h = [](float f) { return float_to_half(f); };
  // A = [[1,3],[2,4]], B = [[5,7],[6,8]] stored column-major.
  const std::vector<std::uint16_t> a = {h(1), h(2), h(3), h(4)};
  const std::vector<std::uint16_t> b = {h(5), h(6), h(7), h(8)};
  const auto c = reference_gemm_fp16(2, a, b);
  const std::vector<float> expected = {23, 34, 31, 46};
  EXPECT_EQ(c, expected);
}

TEST(ReferenceGemm, IdentityGivesBackTheInput) {
  const std::int64_t n = 17;
  std::vector<std::uint16_t> a(n * n), id(n * n, float_to_half(0.0f));
  fill_fp16(a, 3);
  for (std::int64_t i = 0; i < n; ++i) id[i + i * n] = float_to_half(1.0f);
  const auto c = reference_gemm_fp16(n, a, id);
  ASSERT_EQ(c.size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(c[i], half_to_float(a[i]));
}

TEST(ReferenceGemm, SizeMismatchGivesEmpty) {
  const std::vector<std::uint16_t> a(4), b(9);
  EXPECT_TRUE(reference_gemm_fp16(2, a, b).empty());
  EXPECT_TRUE(reference_gemm_fp16(0, {}, {}).empty());
}

struct CheckFixture {
  std::int64_t n = 64;
  std::vector<float> reference;
  std::vector<float> device;  // what a correct device returns: fp16-rounded
  CheckFixture() {
    std::vector<std::uint16_t> a(n * n), b(n * n);
    fill_fp16(a, 11);
    fill_fp16(b, 12);
    reference = reference_gemm_fp16(n, a, b);
    for (float r : reference) device.push_back(half_to_float(float_to_half(r)));
  }
};

TEST(Tolerance, StatedValue) { EXPECT_DOUBLE_EQ(kRelativeTolerance, 1.0 / 256.0); }

TEST(Tolerance, AcceptsFp16RoundedOutput) {
  CheckFixture f;
  const auto check = check_tolerance(f.device, f.reference, f.n);
  EXPECT_TRUE(check.ok) << check.message;
  EXPECT_EQ(check.mismatches, 0);
  EXPECT_LT(check.max_scaled_error, kRelativeTolerance / 4);
  EXPECT_NE(check.message.find("passed"), std::string::npos);
}

TEST(Tolerance, AcceptsADifferentAccumulationOrder) {
  CheckFixture f;
  // Sum in reverse k order, then round to fp16: what another GEMM kernel may do.
  std::vector<std::uint16_t> a(f.n * f.n), b(f.n * f.n);
  fill_fp16(a, 11);
  fill_fp16(b, 12);
  std::vector<float> other(f.n * f.n);
  for (std::int64_t j = 0; j < f.n; ++j) {
    for (std::int64_t i = 0; i < f.n; ++i) {
      float acc = 0.0f;
      for (std::int64_t k = f.n - 1; k >= 0; --k) acc += half_to_float(a[i + k * f.n]) * half_to_float(b[k + j * f.n]);
      other[i + j * f.n] = half_to_float(float_to_half(acc));
    }
  }
  EXPECT_TRUE(check_tolerance(other, f.reference, f.n).ok);
}

TEST(Tolerance, RejectsOnePerturbedElementAndNamesIt) {
  CheckFixture f;
  double sum_sq = 0;
  for (float r : f.reference) sum_sq += double(r) * r;
  const double rms = std::sqrt(sum_sq / double(f.reference.size()));
  const std::int64_t row = 5, col = 9;
  auto& value = f.device[row + col * f.n];
  value = static_cast<float>(f.reference[row + col * f.n] + 0.02 * (std::fabs(f.reference[row + col * f.n]) + rms));
  const auto check = check_tolerance(f.device, f.reference, f.n);
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.mismatches, 1);
  EXPECT_EQ(check.worst_row, row);
  EXPECT_EQ(check.worst_col, col);
  EXPECT_NEAR(check.max_scaled_error, 0.02, 1e-3);
  EXPECT_NE(check.message.find("failed"), std::string::npos);
}

TEST(Tolerance, RejectsATransposedResult) {
  CheckFixture f;
  std::vector<float> transposed(f.device.size());
  for (std::int64_t i = 0; i < f.n; ++i) {
    for (std::int64_t j = 0; j < f.n; ++j) transposed[j + i * f.n] = f.device[i + j * f.n];
  }
  const auto check = check_tolerance(transposed, f.reference, f.n);
  EXPECT_FALSE(check.ok);
  EXPECT_GT(check.mismatches, f.n * f.n / 2);
}

TEST(Tolerance, RejectsNonFiniteValues) {
  CheckFixture f;
  f.device[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(check_tolerance(f.device, f.reference, f.n).ok);
  CheckFixture g;
  g.device[7] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(check_tolerance(g.device, g.reference, g.n).ok);
}

TEST(Tolerance, ZeroReferenceNeedsZeroResult) {
  const std::vector<float> zeros(16, 0.0f);
  EXPECT_TRUE(check_tolerance(zeros, zeros, 4).ok);
  auto almost = zeros;
  almost[2] = 1e-6f;
  EXPECT_FALSE(check_tolerance(almost, zeros, 4).ok);
}

TEST(Tolerance, SizeMismatchFails) {
  const std::vector<float> four(4, 1.0f), nine(9, 1.0f);
  const auto check = check_tolerance(four, nine, 2);
  EXPECT_FALSE(check.ok);
  EXPECT_NE(check.message.find("size mismatch"), std::string::npos);
}

// ---- throughput and peaks ------------------------------------------------

TEST(Throughput, TflopsFormula) {
  EXPECT_NEAR(matmul_tflops(8192, 10, 1.0), 2.0 * 8192.0 * 8192.0 * 8192.0 * 10 / 1e12, 1e-9);
  EXPECT_NEAR(matmul_tflops(4096, 1, 1e-3), 137.438953472, 1e-9);
  EXPECT_NEAR(matmul_tflops(1, 1, 2e-12), 1.0, 1e-12);
}

TEST(Throughput, NonPositiveTimeOrSizeGivesZero) {
  EXPECT_EQ(matmul_tflops(8192, 10, 0.0), 0.0);
  EXPECT_EQ(matmul_tflops(8192, 10, -1.0), 0.0);
  EXPECT_EQ(matmul_tflops(8192, 10, std::numeric_limits<double>::quiet_NaN()), 0.0);
  EXPECT_EQ(matmul_tflops(0, 10, 1.0), 0.0);
  EXPECT_EQ(matmul_tflops(8192, 0, 1.0), 0.0);
}

TEST(Throughput, PercentOfPeak) {
  EXPECT_NEAR(percent_of_peak(692.58, 989.4), 70.0, 1e-3);
  EXPECT_EQ(percent_of_peak(100.0, 0.0), 0.0);
}

TEST(PeakTable, LooksUpDeviceNamesByToken) {
  struct Case {
    const char* name;
    double peak;
  };
  const Case cases[] = {
      {"NVIDIA H100 80GB HBM3", 989.4}, {"NVIDIA H100 PCIe", 756.5},        {"NVIDIA H100 NVL", 835.5},
      {"NVIDIA H200", 989.4},           {"NVIDIA H200 NVL", 835.5},         {"NVIDIA GH200 480GB", 989.4},
      {"NVIDIA A100-SXM4-40GB", 312.0}, {"NVIDIA A100 80GB PCIe", 312.0},   {"NVIDIA A10", 125.0},
      {"Tesla V100-SXM2-16GB", 125.0},  {"Tesla V100-PCIE-32GB", 112.0},    {"NVIDIA L40S", 362.05},
      {"NVIDIA L40", 181.05},           {"NVIDIA L4", 121.0},               {"Tesla T4", 65.0},
      {"NVIDIA GeForce RTX 3090", 71.0}, {"nvidia h100 80gb hbm3", 989.4},  {"NVIDIA B200", 2250.0},
      {"NVIDIA GeForce RTX 4090", 165.2},
  };
  for (const auto& c : cases) {
    const auto peak = dense_fp16_peak_tflops(c.name);
    ASSERT_TRUE(peak.has_value()) << c.name;
    EXPECT_DOUBLE_EQ(*peak, c.peak) << c.name;
  }
}

TEST(PeakTable, UnknownDevicesAndMigSlicesHaveNoPeak) {
  EXPECT_FALSE(dense_fp16_peak_tflops("NVIDIA A10G"));        // not the A10, and only assumed
  EXPECT_FALSE(dense_fp16_peak_tflops("NVIDIA RTX A4000"));   // not the A40
  EXPECT_FALSE(dense_fp16_peak_tflops("NVIDIA A100-SXM4-40GB MIG 3g.20gb"));
  EXPECT_FALSE(dense_fp16_peak_tflops("Some Future GPU"));
  EXPECT_FALSE(dense_fp16_peak_tflops(""));
}

// The probe accumulates in fp32; GeForce cards run that at half their
// fp16-accumulate rate, datacenter parts at the same rate.
TEST(PeakTable, EachModeHasItsOwnFigure) {
  using vramsim::Accumulate;
  EXPECT_DOUBLE_EQ(*dense_fp16_peak_tflops("NVIDIA GeForce RTX 4090", Accumulate::Fp32), 165.2);
  EXPECT_DOUBLE_EQ(*dense_fp16_peak_tflops("NVIDIA GeForce RTX 4090", Accumulate::Fp16), 330.3);
  EXPECT_DOUBLE_EQ(*dense_fp16_peak_tflops("NVIDIA GeForce RTX 3090", Accumulate::Fp32), 71.0);
  EXPECT_DOUBLE_EQ(*dense_fp16_peak_tflops("NVIDIA GeForce RTX 3090", Accumulate::Fp16), 142.0);
  EXPECT_DOUBLE_EQ(*dense_fp16_peak_tflops("NVIDIA H100 80GB HBM3", Accumulate::Fp16), 989.4);
  // The P100 has no tensor cores: its 18.7 is the fp16-accumulate half2 rate
  // and the table claims no fp32-accumulate peak for it.
  EXPECT_FALSE(dense_fp16_peak_tflops("Tesla P100-PCIE-16GB", Accumulate::Fp32));
  EXPECT_DOUBLE_EQ(*dense_fp16_peak_tflops("Tesla P100-PCIE-16GB", Accumulate::Fp16), 18.7);
}

TEST(PeakTable, EveryRowHasAFigureAndASource) {
  ASSERT_FALSE(peak_table().empty());
  for (const auto& e : peak_table()) {
    EXPECT_FALSE(e.tokens.empty());
    EXPECT_FALSE(e.source.empty()) << e.tokens;
    EXPECT_TRUE(e.fp32_accumulate_tflops > 0.0 || e.fp16_accumulate_tflops > 0.0) << e.tokens;
    // fp32 accumulation is never faster than fp16 accumulation.
    if (e.fp32_accumulate_tflops > 0.0) {
      EXPECT_LE(e.fp32_accumulate_tflops, e.fp16_accumulate_tflops) << e.tokens;
    }
    EXPECT_EQ(e.assumed, e.source.rfind("assumed", 0) == 0) << e.tokens;
  }
}

}  // namespace
}  // namespace vramsim::gpu
