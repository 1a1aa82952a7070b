// The device probe and the vramsim-probe binary. Tests that need a CUDA
// device skip with "no CUDA device visible: ..." where there is none.

#include <gtest/gtest.h>

#include <algorithm>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/cuda/gpu_detector.hpp"
#include "backends/cuda/matmul_probe.hpp"
#include "tests/backends/cuda/test_support.hpp"

#if VRAMSIM_CUDA_ENABLED
#include "backends/cuda/cublaslt_loader.hpp"
#include "backends/cuda/cuda_runtime_detector.hpp"
#endif

namespace vramsim::gpu {
namespace {

using test_support::lines_of;
using test_support::run_command;
using test_support::ScopedEnv;
using test_support::shell_quote;
using test_support::TempDir;
using test_support::write_file;

// std::nullopt when a CUDA device is usable; otherwise why not, as the
// "no CUDA device visible: ..." line.
std::optional<std::string> no_device_reason() {
#if VRAMSIM_CUDA_ENABLED
  const auto inventory = CudaRuntimeDetector().detect();
  if (!inventory) return inventory.error().message;
  if (inventory->devices.empty()) return std::string(kNoDevicePrefix) + "the CUDA runtime found no devices";
  return std::nullopt;
#else
  return std::string(kNoDevicePrefix) + "vramsim was built without CUDA support";
#endif
}

// ---- in-process probe ----------------------------------------------------

TEST(MatmulProbe, InvalidOptionsAreRejectedBeforeAnyDeviceWork) {
  ProbeOptions o;
  o.iterations = 0;
  const auto r = run_matmul_probe(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument);
}

TEST(MatmulProbe, WithoutADeviceReportsNoDeviceNeverAFigure) {
  if (!no_device_reason()) GTEST_SKIP() << "a CUDA device is visible";
  ProbeOptions o;
  o.n = 64;
  o.check_n = 16;
  o.iterations = 1;
  o.warmup = 0;
  const auto r = run_matmul_probe(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::NoDevice);
  EXPECT_EQ(r.error().message.rfind(kNoDevicePrefix, 0), 0u) << r.error().message;
}

void expect_sane_report(const ProbeReport& report, const ProbeOptions& o) {
  EXPECT_FALSE(report.gpu.empty());
  EXPECT_GT(report.gpu_total_mb, 0);
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(report.visible_devices, visible != nullptr ? visible : "");
  EXPECT_GT(report.matmul_tflops, 0.0);
  const auto n = static_cast<std::int64_t>(o.n);
  const std::int64_t matrices_mb = (3 * n * n * 2 + (1 << 20) - 1) >> 20;
  EXPECT_GE(report.peak_alloc_mb, matrices_mb);
  EXPECT_LE(report.peak_alloc_mb, matrices_mb + 64);  // plus at most the cuBLASLt workspace
  EXPECT_EQ(report.n, o.n);
  // Each sample runs at least the requested GEMMs, more to last sample_ms.
  EXPECT_GE(report.iterations, o.iterations);
  EXPECT_EQ(report.samples, o.samples);
  EXPECT_LE(report.tflops_min, report.matmul_tflops);
  EXPECT_GE(report.tflops_max, report.matmul_tflops);
  EXPECT_GT(report.sample_ms, 0.0);
  EXPECT_GE(report.warmup_ms, o.warmup_ms);
  const std::int64_t side = std::min<std::int64_t>(o.n, o.check_samples);
  EXPECT_EQ(report.checked_elements, side * side);
}

TEST(MatmulProbeOnDevice, SmallNRunPassesTheCheckAndReports) {
  if (const auto reason = no_device_reason()) GTEST_SKIP() << *reason;
  ProbeOptions o;
  o.n = 1024;
  o.iterations = 3;
  o.warmup = 1;
  o.check_n = 128;
  const auto r = run_matmul_probe(o);
  ASSERT_TRUE(r) << r.error().message;
  expect_sane_report(*r, o);
}

// The size the targets are stated at, with the result check of the
// timed output (tools/device-probe.sh runs it on a GPU host).
TEST(MatmulProbeOnDevice, N8192PassesTheResultCheck) {
  if (const auto reason = no_device_reason()) GTEST_SKIP() << *reason;
  ProbeOptions o;
  o.n = 8192;
  const auto r = run_matmul_probe(o);
  ASSERT_TRUE(r) << r.error().message;
  expect_sane_report(*r, o);
  EXPECT_EQ(r->checked_elements, 16 * 16);
}

TEST(MatmulProbeOnDevice, SizesThatAreNotMultiplesOfEight) {
  if (const auto reason = no_device_reason()) GTEST_SKIP() << *reason;
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{33}, std::int64_t{257}}) {
    ProbeOptions o;
    o.n = n;
    o.check_n = n;
    o.iterations = 2;
    o.warmup = 1;
    o.warmup_ms = 100;  // short: these sizes test shapes, not throughput
    o.sample_ms = 20;
    const auto r = run_matmul_probe(o);
    ASSERT_TRUE(r) << "n=" << n << ": " << r.error().message;
    expect_sane_report(*r, o);
  }
}

#if VRAMSIM_CUDA_ENABLED
TEST(CudaRuntimeDetectorOnDevice, ListsDevicesWithFreeMemory) {
  if (const auto reason = no_device_reason()) GTEST_SKIP() << *reason;
  const auto inv = CudaRuntimeDetector().detect();
  ASSERT_TRUE(inv) << inv.error().message;
  EXPECT_EQ(inv->source, "cuda-runtime");
  for (std::size_t i = 0; i < inv->devices.size(); ++i) {
    const auto& d = inv->devices[i];
    EXPECT_EQ(d.index, static_cast<int>(i));
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.total_mb, 0);
    ASSERT_TRUE(d.free_mb.has_value());
    EXPECT_LE(*d.free_mb, d.total_mb);
  }
}

// ---- cuBLASLt loaded at run time ------------------------------------------

TEST(CublasLtLoader, LoadsTheToolkitsLibraryByDefault) {
  ScopedEnv unset(kCublasLtEnv, std::nullopt);
  const auto candidates = cublaslt_candidates();
  ASSERT_FALSE(candidates.empty());
  EXPECT_EQ(candidates.front(), "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR));
  const auto api = load_cublaslt(candidates);
  ASSERT_TRUE(api) << api.error().message;
  EXPECT_NE(api->Matmul, nullptr);
  EXPECT_STREQ(api->GetStatusName(CUBLAS_STATUS_SUCCESS), "CUBLAS_STATUS_SUCCESS");
}

TEST(CublasLtLoader, AMissingLibraryIsNoUsableCudaNamingWhatWasTried) {
  TempDir dir;
  const std::string missing = dir.file("libcublasLt.so.13");
  const auto api = load_cublaslt({missing});
  ASSERT_FALSE(api);
  EXPECT_EQ(api.error().kind, ErrorKind::NoDevice);
  EXPECT_EQ(static_cast<int>(exit_code_for(api.error().kind)), 3);
  EXPECT_EQ(api.error().message.rfind(kNoUsableCudaPrefix, 0), 0u) << api.error().message;
  EXPECT_NE(api.error().message.find(missing), std::string::npos) << api.error().message;
}

TEST(CublasLtLoader, ALibraryWithoutTheEntryPointsIsRefused) {
  const auto api = load_cublaslt({"libm.so.6"});
  ASSERT_FALSE(api);
  EXPECT_NE(api.error().message.find("libm.so.6 has no symbol cublasLtCreate"), std::string::npos)
      << api.error().message;
}

TEST(CublasLtLoader, TheEnvironmentNamesTheOnlyCandidate) {
  ScopedEnv env(kCublasLtEnv, "/opt/elsewhere/libcublasLt.so.13");
  EXPECT_EQ(cublaslt_candidates(), std::vector<std::string>{"/opt/elsewhere/libcublasLt.so.13"});
}
#endif

TEST(CudaRuntimeDetector, AnswersWithoutCrashingEverywhere) {
  const auto inv = make_default_detector()->detect();
  if (!inv) {
    EXPECT_TRUE(inv.error().kind == ErrorKind::NoDevice || inv.error().kind == ErrorKind::DetectionFailed)
        << inv.error().message;
    if (inv.error().kind == ErrorKind::NoDevice) {
      EXPECT_EQ(inv.error().message.rfind(kNoDevicePrefix, 0), 0u) << inv.error().message;
    }
  }
}

// ---- the vramsim-probe binary --------------------------------------------

#ifdef VRAMSIM_PROBE_RELATIVE

std::string probe(const std::string& args) { return shell_quote(test_support::probe_binary()) + " " + args; }

TEST(ProbeBinary, NoDeviceExitsThreeWithOneLine) {
  if (!no_device_reason()) GTEST_SKIP() << "a CUDA device is visible";
  for (const char* args : {"--n 64 --check-n 16 --iterations 1 --warmup 0", ""}) {
    const auto r = run_command(probe(args));
    EXPECT_EQ(r.status, 3) << args << ": " << r.output;
    const auto lines = lines_of(r.output);
    ASSERT_EQ(lines.size(), 1u) << r.output;
    EXPECT_TRUE(lines[0].rfind(kNoDevicePrefix, 0) == 0 || lines[0].rfind(kNoUsableCudaPrefix, 0) == 0) << r.output;
    if (!cuda_built_in()) {
      EXPECT_EQ(lines[0], "no CUDA device visible: vramsim was built without CUDA support");
    }
  }
}

TEST(ProbeBinary, BadArgumentsExitTwoWithOneLine) {
  for (const char* args : {"--n 0", "--n=-3", "--n abc", "--iterations 0", "--warmup=-1", "--check-n 0",
                           "--check-n 100000", "--bogus", "--json-out", "extra-positional"}) {
    const auto r = run_command(probe(args));
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_EQ(lines_of(r.output).size(), 1u) << args << ": " << r.output;
  }
}

TEST(ProbeBinary, HelpExitsZeroAndListsTheOptions) {
  const auto r = run_command(probe("--help"));
  EXPECT_EQ(r.status, 0);
  for (const char* option : {"--n", "--iterations", "--warmup", "--check-n", "--detect", "--json-out"}) {
    EXPECT_NE(r.output.find(option), std::string::npos) << option;
  }
}

TEST(ProbeBinary, PeakForPrintsTheTableEntry) {
  auto r = run_command(probe("--peak-for 'NVIDIA H100 80GB HBM3'"));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output,
            "{\"name\":\"NVIDIA H100 80GB HBM3\",\"dense_fp16_tflops\":989.4,\"accumulate\":\"fp32\","
            "\"fp16_accumulate_tflops\":989.4,\"source\":\"NVIDIA H100 Tensor Core GPU datasheet (SXM)\"}\n");
  r = run_command(probe("--peak-for 'NVIDIA GeForce RTX 4090'"));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("\"dense_fp16_tflops\":165.2,\"accumulate\":\"fp32\",\"fp16_accumulate_tflops\":330.3,"),
            std::string::npos)
      << r.output;
  r = run_command(probe("--peak-for 'Mystery GPU'"));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output,
            "{\"name\":\"Mystery GPU\",\"dense_fp16_tflops\":null,\"accumulate\":\"fp32\","
            "\"fp16_accumulate_tflops\":null,\"source\":null}\n");
}

#if VRAMSIM_CUDA_ENABLED
// Without cuBLASLt the probe still starts (it is not linked) and answers the
// "no usable CUDA" status with one line; --detect and --peak-for need none.
TEST(ProbeBinary, AMissingCublasLtExitsThreeWithOneLine) {
  TempDir dir;
  const std::string env = std::string(kCublasLtEnv) + "=" + shell_quote(dir.file("libcublasLt.so.13")) + " ";
  auto r = run_command(env + probe("--n 64 --check-n 16"));
  EXPECT_EQ(r.status, 3) << r.output;
  const auto lines = lines_of(r.output);
  ASSERT_EQ(lines.size(), 1u) << r.output;
  EXPECT_EQ(lines[0].rfind("no usable CUDA: cuBLASLt cannot be loaded", 0), 0u) << r.output;
  EXPECT_NE(lines[0].find(dir.file("libcublasLt.so.13")), std::string::npos) << r.output;
  r = run_command(env + probe("--peak-for 'Tesla T4'"));
  EXPECT_EQ(r.status, 0) << r.output;
  r = run_command(env + probe("--detect"));
  EXPECT_NE(r.status, 127) << r.output;  // the loader's "cannot start" status
  EXPECT_TRUE(r.status == 0 || r.status == 3) << r.output;
}

// The probe binary must not need libcublasLt to start: it has no such
// dependency for the loader to resolve.
TEST(ProbeBinary, DoesNotLinkCublasLt) {
  const auto r = run_command("LD_TRACE_LOADED_OBJECTS=1 " + shell_quote(test_support::probe_binary()));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("libcublas"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("libcudart"), std::string::npos) << r.output;
}
#endif

TEST(ProbeBinary, JsonOutWritesTheSameJson) {
  TempDir dir;
  const auto file = dir.file("out.json");
  const auto r = run_command(probe("--peak-for 'Tesla T4' --json-out " + shell_quote(file)));
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(file);
  std::stringstream content;
  content << in.rdbuf();
  EXPECT_EQ(content.str(), r.output);
}

TEST(ProbeBinary, UnwritableJsonOutExitsFive) {
  TempDir dir;
  const auto r = run_command(probe("--peak-for 'Tesla T4' --json-out " + shell_quote(dir.file("no/such/dir.json"))));
  EXPECT_EQ(r.status, 5) << r.output;
}

TEST(ProbeBinary, DetectPrintsTheInventory) {
  if (cuda_built_in()) {
    const auto reason = no_device_reason();
    const auto r = run_command(probe("--detect"));
    if (reason) {
      EXPECT_EQ(r.status, 3) << r.output;
      ASSERT_EQ(lines_of(r.output).size(), 1u) << r.output;
      EXPECT_EQ(r.output.rfind("no CUDA device visible: ", 0), 0u) << r.output;
    } else {
      ASSERT_EQ(r.status, 0) << r.output;
      const auto j = nlohmann::json::parse(r.output);
      EXPECT_EQ(j["source"], "cuda-runtime");
      EXPECT_FALSE(j["devices"].empty());
    }
    return;
  }
  // Without CUDA, --detect runs the nvidia-smi first on PATH.
  TempDir dir;
  write_file(dir.file("nvidia-smi"), "#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 81559, Disabled'\n", 0755);
  const char* old = std::getenv("PATH");
  ScopedEnv path("PATH", dir.path() + ":" + (old != nullptr ? old : "/usr/bin:/bin"));
  const auto r = run_command(probe("--detect"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output,
            "{\"source\":\"nvidia-smi\",\"devices\":[{\"index\":0,\"name\":\"NVIDIA H100 80GB HBM3\","
            "\"total_mb\":81559,\"free_mb\":null,\"mig_enabled\":false}]}\n");
}

TEST(ProbeBinary, DetectFailuresMapToStatuses) {
  if (cuda_built_in()) GTEST_SKIP() << "--detect uses the CUDA runtime in this build";
  TempDir dir;
  const char* old = std::getenv("PATH");
  ScopedEnv path("PATH", dir.path() + ":" + (old != nullptr ? old : "/usr/bin:/bin"));
  struct Case {
    const char* script;
    int status;
    const char* prefix;
  };
  const Case cases[] = {
      {"echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"; exit 9", 3,
       "no CUDA device visible: nvidia-smi exited with status 9"},
      {"exit 0", 3, "no CUDA device visible: nvidia-smi found no devices"},
      {"echo 'garbage'", 5, "nvidia-smi output line 1"},
  };
  for (const auto& c : cases) {
    write_file(dir.file("nvidia-smi"), std::string("#!/bin/sh\n") + c.script + "\n", 0755);
    const auto r = run_command(probe("--detect"));
    EXPECT_EQ(r.status, c.status) << c.script << ": " << r.output;
    EXPECT_EQ(lines_of(r.output).size(), 1u) << r.output;
    EXPECT_EQ(r.output.rfind(c.prefix, 0), 0u) << r.output;
  }
  std::filesystem::remove(dir.file("nvidia-smi"));
  ScopedEnv only_empty("PATH", dir.path());
  const auto r = run_command(probe("--detect"));
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_EQ(r.output, "no CUDA device visible: nvidia-smi not found on PATH\n");
}

#endif  // VRAMSIM_PROBE_RELATIVE

}  // namespace
}  // namespace vramsim::gpu
