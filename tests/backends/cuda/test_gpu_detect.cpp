// GPU detection: nvidia-smi CSV parsing and NvidiaSmiDetector against fake
// nvidia-smi scripts put first on PATH.

#include <gtest/gtest.h>

#include <string>

#include "backends/cuda/gpu_detector.hpp"
#include "backends/cuda/gpu_inventory.hpp"
#include "tests/backends/cuda/test_support.hpp"

namespace vramsim::gpu {
namespace {

using test_support::ScopedEnv;
using test_support::TempDir;
using test_support::write_file;

constexpr const char* kThreeGpus =
    "NVIDIA H100 80GB HBM3, 81559, Disabled\n"
    "NVIDIA A100-SXM4-40GB, 40960, Enabled\n"
    "Tesla T4, 15360, [N/A]\n";

// ---- CSV parsing ---------------------------------------------------------

TEST(NvidiaSmiCsv, ParsesNamesMemoryAndMigModes) {
  const auto inv = parse_nvidia_smi_csv(kThreeGpus);
  ASSERT_TRUE(inv) << inv.error().message;
  EXPECT_EQ(inv->source, "nvidia-smi");
  ASSERT_EQ(inv->devices.size(), 3u);
  EXPECT_EQ(inv->devices[0].index, 0);
  EXPECT_EQ(inv->devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(inv->devices[0].total_mb, 81559);
  EXPECT_EQ(inv->devices[0].mig_enabled, std::optional<bool>(false));
  EXPECT_EQ(inv->devices[1].index, 1);
  EXPECT_EQ(inv->devices[1].total_mb, 40960);
  EXPECT_EQ(inv->devices[1].mig_enabled, std::optional<bool>(true));
  EXPECT_EQ(inv->devices[2].name, "Tesla T4");
  EXPECT_FALSE(inv->devices[2].mig_enabled.has_value());
  for (const auto& d : inv->devices) EXPECT_FALSE(d.free_mb.has_value());
}

TEST(NvidiaSmiCsv, ToleratesCrLfBlankLinesAndPlainNA) {
  const auto inv = parse_nvidia_smi_csv("\r\nNVIDIA L4, 23034, N/A\r\n\r\n  NVIDIA L40S ,46068,Disabled  \n\n");
  ASSERT_TRUE(inv) << inv.error().message;
  ASSERT_EQ(inv->devices.size(), 2u);
  EXPECT_EQ(inv->devices[0].name, "NVIDIA L4");
  EXPECT_FALSE(inv->devices[0].mig_enabled.has_value());
  EXPECT_EQ(inv->devices[1].name, "NVIDIA L40S");
  EXPECT_EQ(inv->devices[1].total_mb, 46068);
  EXPECT_EQ(inv->devices[1].index, 1);
}

TEST(NvidiaSmiCsv, EmptyOutputIsAnEmptyInventory) {
  const auto inv = parse_nvidia_smi_csv("");
  ASSERT_TRUE(inv);
  EXPECT_TRUE(inv->devices.empty());
}

TEST(NvidiaSmiCsv, MalformedLinesAreErrorsNamingTheLine) {
  struct Case {
    const char* csv;
    const char* needle;
  };
  const Case cases[] = {
      {"NVIDIA H100 80GB HBM3, 81559\n", "expected 3 comma-separated fields, got 2"},
      {"NVIDIA H100, 81559, Disabled, extra\n", "got 4"},
      {"NVIDIA H100, lots, Disabled\n", "memory.total"},
      {"NVIDIA H100, [N/A], Disabled\n", "memory.total"},
      {"NVIDIA H100, -1, Disabled\n", "memory.total"},
      {"NVIDIA H100, 81559 MiB, Disabled\n", "memory.total"},
      {"NVIDIA H100, 81559, Maybe\n", "mig.mode.current"},
      {", 81559, Disabled\n", "empty GPU name"},
      {"No devices were found\n", "line 1"},
  };
  for (const auto& c : cases) {
    const auto inv = parse_nvidia_smi_csv(c.csv);
    ASSERT_FALSE(inv) << c.csv;
    EXPECT_EQ(inv.error().kind, ErrorKind::DetectionFailed);
    EXPECT_NE(inv.error().message.find(c.needle), std::string::npos) << inv.error().message;
    EXPECT_NE(inv.error().message.find("nvidia-smi output line"), std::string::npos);
  }
  const auto second = parse_nvidia_smi_csv("NVIDIA H100, 81559, Disabled\nbroken\n");
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("line 2"), std::string::npos) << second.error().message;
}

TEST(GpuInventoryJson, ShapeWithNullsForUnknowns) {
  const auto inv = parse_nvidia_smi_csv(kThreeGpus);
  ASSERT_TRUE(inv);
  const auto j = to_json(*inv);
  EXPECT_EQ(j.dump(),
            R"({"source":"nvidia-smi","devices":[)"
            R"({"index":0,"name":"NVIDIA H100 80GB HBM3","total_mb":81559,"free_mb":null,"mig_enabled":false},)"
            R"({"index":1,"name":"NVIDIA A100-SXM4-40GB","total_mb":40960,"free_mb":null,"mig_enabled":true},)"
            R"({"index":2,"name":"Tesla T4","total_mb":15360,"free_mb":null,"mig_enabled":null}]})");
}

// ---- NvidiaSmiDetector with fake binaries --------------------------------

// A fake nvidia-smi that insists on the documented query, then runs `body`.
std::string fake_smi(const std::string& body) {
  return std::string("#!/bin/sh\n") +
         "if [ \"$1\" != \"--query-gpu=name,memory.total,mig.mode.current\" ] || "
         "[ \"$2\" != \"--format=csv,noheader,nounits\" ] || [ $# -ne 2 ]; then\n"
         "  echo \"unexpected arguments: $*\"; exit 2\nfi\n" +
         body;
}

class FakeNvidiaSmi : public ::testing::Test {
 protected:
  void install(const std::string& body) {
    ASSERT_FALSE(dir_.path().empty());
    write_file(dir_.file("nvidia-smi"), fake_smi(body), 0755);
    const char* old = std::getenv("PATH");
    path_.emplace("PATH", dir_.path() + ":" + (old != nullptr ? old : "/usr/bin:/bin"));
  }
  TempDir dir_;
  std::optional<ScopedEnv> path_;
};

TEST_F(FakeNvidiaSmi, DetectsTheListedGpus) {
  install(std::string("cat <<'CSV'\n") + kThreeGpus + "CSV\n");
  const NvidiaSmiDetector detector;
  EXPECT_EQ(detector.name(), "nvidia-smi");
  const auto inv = detector.detect();
  ASSERT_TRUE(inv) << inv.error().message;
  ASSERT_EQ(inv->devices.size(), 3u);
  EXPECT_EQ(inv->devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(inv->devices[1].mig_enabled, std::optional<bool>(true));
}

TEST_F(FakeNvidiaSmi, StderrDoesNotCorruptTheCsv) {
  install("echo 'WARNING: something' >&2\necho 'NVIDIA L4, 23034, Disabled'\n");
  const auto inv = NvidiaSmiDetector().detect();
  ASSERT_TRUE(inv) << inv.error().message;
  ASSERT_EQ(inv->devices.size(), 1u);
}

TEST_F(FakeNvidiaSmi, DriverNotLoadedIsNoDevice) {
  install(
      "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"\n"
      "exit 9\n");
  const auto inv = NvidiaSmiDetector().detect();
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().kind, ErrorKind::NoDevice);
  EXPECT_EQ(inv.error().message.rfind("no CUDA device visible: ", 0), 0u) << inv.error().message;
  EXPECT_NE(inv.error().message.find("status 9"), std::string::npos);
  EXPECT_NE(inv.error().message.find("couldn't communicate"), std::string::npos);
}

TEST_F(FakeNvidiaSmi, NoDevicesFoundIsNoDevice) {
  install("echo 'No devices were found'\nexit 6\n");
  const auto inv = NvidiaSmiDetector().detect();
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().kind, ErrorKind::NoDevice);
  EXPECT_NE(inv.error().message.find("No devices were found"), std::string::npos);
}

TEST_F(FakeNvidiaSmi, OtherNonZeroExitIsADetectionFailure) {
  install("echo 'Field \"mig.mode.current\" is not a valid field to query.'\nexit 2\n");
  const auto inv = NvidiaSmiDetector().detect();
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().kind, ErrorKind::DetectionFailed);
  EXPECT_NE(inv.error().message.find("status 2"), std::string::npos);
  EXPECT_NE(inv.error().message.find("not a valid field"), std::string::npos);
}

TEST_F(FakeNvidiaSmi, GarbageOutputIsADetectionFailure) {
  install("echo 'this is not csv'\n");
  const auto inv = NvidiaSmiDetector().detect();
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().kind, ErrorKind::DetectionFailed);
}

TEST_F(FakeNvidiaSmi, KilledBySignalIsADetectionFailure) {
  install("kill -9 $$\n");
  const auto inv = NvidiaSmiDetector().detect();
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().kind, ErrorKind::DetectionFailed);
  // Either the shell was replaced by the script (signal) or it reports 128+9.
  const auto& msg = inv.error().message;
  EXPECT_TRUE(msg.find("signal 9") != std::string::npos || msg.find("status 137") != std::string::npos) << msg;
}

TEST_F(FakeNvidiaSmi, NoOutputIsAnEmptyInventory) {
  install("exit 0\n");
  const auto inv = NvidiaSmiDetector().detect();
  ASSERT_TRUE(inv) << inv.error().message;
  EXPECT_TRUE(inv->devices.empty());
}

TEST(NvidiaSmiDetector, MissingBinaryIsNoDeviceNotACrash) {
  TempDir empty;
  ScopedEnv path("PATH", empty.path());
  const auto inv = NvidiaSmiDetector().detect();
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().kind, ErrorKind::NoDevice);
  EXPECT_EQ(inv.error().message, "no CUDA device visible: nvidia-smi not found on PATH");
}

TEST(NvidiaSmiDetector, UnsetPathIsNoDevice) {
  ScopedEnv path("PATH", std::nullopt);
  const auto inv = NvidiaSmiDetector().detect();
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().kind, ErrorKind::NoDevice);
}

TEST(NvidiaSmiDetector, ExplicitMissingPathIsNoDevice) {
  TempDir dir;
  const auto inv = NvidiaSmiDetector(dir.file("nvidia-smi")).detect();
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().kind, ErrorKind::NoDevice);
  EXPECT_NE(inv.error().message.find("is not an executable file"), std::string::npos);
}

TEST(NvidiaSmiDetector, ExplicitPathRunsThatProgram) {
  TempDir dir;
  write_file(dir.file("my smi"), fake_smi("echo 'NVIDIA H200, 143771, Disabled'\n"), 0755);
  const auto inv = NvidiaSmiDetector(dir.file("my smi")).detect();
  ASSERT_TRUE(inv) << inv.error().message;
  ASSERT_EQ(inv->devices.size(), 1u);
  EXPECT_EQ(inv->devices[0].total_mb, 143771);
}

TEST(FindExecutable, SkipsNonExecutablesAndDirectories) {
  TempDir first, second, third;
  write_file(first.file("tool"), "#!/bin/sh\n", 0644);              // not executable
  std::filesystem::create_directory(second.file("tool"));            // a directory
  write_file(third.file("tool"), "#!/bin/sh\n", 0755);
  ScopedEnv path("PATH", first.path() + ":" + second.path() + ":" + third.path());
  const auto found = find_executable("tool");
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, third.file("tool"));
  EXPECT_FALSE(find_executable("no-such-tool-here"));
  EXPECT_FALSE(find_executable(""));
}

TEST(DefaultDetector, PrefersTheCudaRuntimeWhenBuiltIn) {
  const auto detector = make_default_detector();
  ASSERT_NE(detector, nullptr);
  EXPECT_EQ(detector->name(), cuda_built_in() ? "cuda-runtime" : "nvidia-smi");
}

}  // namespace
}  // namespace vramsim::gpu
