// tools/device-probe.sh against a fake probe and a fake python (shell stubs
// in a temp folder first on PATH): the table, the JSON files, the status.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/backends/cuda/test_support.hpp"

#ifdef VRAMSIM_SOURCE_RELATIVE

namespace vramsim::gpu {
namespace {

using test_support::lines_of;
using test_support::run_command;
using test_support::shell_quote;
using test_support::TempDir;
using test_support::write_file;

// Reports n / 10 + 0.5 TFLOPS and 3 n^2 * 2 bytes in MiB; answers --detect
// and --peak-for from a one-entry table; N = 16384 is out of memory when
// FAKE_OOM is set.
constexpr const char* kFakeProbe = R"(#!/bin/sh
out=""
n=""
mode=run
while [ $# -gt 0 ]; do
  case "$1" in
    --detect) mode=detect ;;
    --peak-for) mode=peak; name="$2"; shift ;;
    --json-out) out="$2"; shift ;;
    --n) n="$2"; shift ;;
  esac
  shift
done
case $mode in
  detect) line='{"source":"cuda-runtime","devices":[{"index":0,"name":"NVIDIA H200","total_mb":143771,"free_mb":143000,"mig_enabled":null}]}' ;;
  peak) case "$name" in
          *H200*) line="{\"name\":\"$name\",\"dense_fp16_tflops\":989.4,\"accumulate\":\"fp32\",\"fp16_accumulate_tflops\":989.4,\"source\":\"NVIDIA H200 Tensor Core GPU datasheet (SXM)\"}" ;;
          *) line="{\"name\":\"$name\",\"dense_fp16_tflops\":null,\"accumulate\":\"fp32\",\"fp16_accumulate_tflops\":null,\"source\":null}" ;;
        esac ;;
  run) if [ -n "$FAKE_OOM" ] && [ "$n" = 16384 ]; then
         echo "out of memory: n=16384 needs 1568 MiB, 1000 MiB free" >&2; exit 6
       fi
       line="{\"gpu\":\"NVIDIA H200\",\"gpu_total_mb\":143771,\"visible_devices\":\"\",\"matmul_tflops\":$((n / 10)).5,\"peak_alloc_mb\":$((3 * n * n * 2 / 1048576)),\"n\":$n,\"iterations\":10}" ;;
esac
[ -n "$out" ] && echo "$line" > "$out"
echo "$line"
)";

// Answers the torch check, then writes torch-N.json at 0.8x the probe's
// figure (rounded like the probe) and 8 MiB more memory.
constexpr const char* kFakePython = R"(#!/bin/sh
if [ "$1" = -c ]; then
  case "$2" in
    *is_available*) exit "${FAKE_TORCH_STATUS:-0}" ;;
    *) echo "torch 2.9.0 CUDA 13.0"; exit 0 ;;
  esac
fi
sizes=""; dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes="$2"; shift ;;
    --out-dir) dir="$2"; shift ;;
  esac
  shift
done
for n in $sizes; do
  t=$(awk -v n="$n" 'BEGIN { printf "%.1f", 0.8 * (int(n / 10) + 0.5) }')
  echo "{\"gpu\":\"NVIDIA H200\",\"n\":$n,\"matmul_tflops\":$t,\"max_memory_allocated_mb\":$((3 * n * n * 2 / 1048576 + 8))}" > "$dir/torch-$n.json"
done
)";

struct Stubs {
  TempDir dir;
  std::string out;
  Stubs() : out(dir.file("out")) {
    write_file(dir.file("probe"), kFakeProbe, 0755);
    std::filesystem::create_directory(dir.file("bin"));
    write_file(dir.file("bin/python3"), kFakePython, 0755);
  }
  std::string run(const std::string& env = "") const {
    const char* path = std::getenv("PATH");
    return "PATH=" + shell_quote(dir.file("bin") + ":" + (path != nullptr ? path : "/usr/bin:/bin")) + " " + env +
           " " + shell_quote(test_support::source_root() + "/tools/device-probe.sh") + " " + shell_quote(out) +
           " --probe " + shell_quote(dir.file("probe"));
  }
  std::string read(const std::string& name) const {
    std::ifstream in(out + "/" + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

TEST(DeviceScript, OneTableSideBySideWithPyTorch) {
  Stubs s;
  const auto r = run_command(s.run());
  ASSERT_EQ(r.status, 0) << r.output;
  const auto lines = lines_of(r.output);
  ASSERT_EQ(lines.size(), 11u) << r.output;
  EXPECT_EQ(lines[0], "device: NVIDIA H200");
  EXPECT_EQ(lines[3], "dense fp16 peak (fp32 accumulate): 989.4 TFLOPS (NVIDIA H200 Tensor Core GPU datasheet (SXM))");
  EXPECT_EQ(lines[4], "PyTorch: torch 2.9.0 CUDA 13.0, exit 0");
  EXPECT_EQ(lines[5], "N      probe TFLOPS  % of peak  PyTorch TFLOPS  probe/PyTorch   probe peak MiB   PyTorch peak MiB");
  EXPECT_EQ(lines[6], "4096          409.5       41.4           327.6          1.250               96                104");
  EXPECT_EQ(lines[7], "8192          819.5       82.8           655.6          1.250              384                392");
  EXPECT_EQ(lines[8], "16384        1638.5      165.6          1310.8          1.250             1536               1544");
  EXPECT_EQ(lines[9], "targets at N=8192: >= 70% of peak: met (82.8); >= 0.95 of PyTorch: met (1.250)");
  EXPECT_EQ(lines[10].rfind("elapsed: ", 0), 0u);
  EXPECT_EQ(s.read("table.txt"), r.output);
  for (const char* f : {"detect.json", "peak.json", "probe-4096.json", "probe-8192.json", "probe-16384.json",
                        "torch-4096.json", "torch-8192.json", "torch-16384.json"})
    EXPECT_TRUE(std::filesystem::exists(s.out + "/" + f)) << f;
  const std::string summary = s.read("summary.json");
  EXPECT_NE(summary.find("\"device\":\"NVIDIA H200\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("{\"n\":8192,\"probe_tflops\":819.5,\"probe_status\":0,\"percent_of_peak\":82.8,"
                         "\"torch_tflops\":655.6,\"probe_over_torch\":1.250,\"probe_peak_alloc_mb\":384,"
                         "\"torch_max_memory_allocated_mb\":392}"),
            std::string::npos)
      << summary;
}

TEST(DeviceScript, WithoutTorchThePyTorchColumnsSayNotMeasured) {
  Stubs s;
  auto r = run_command(s.run("FAKE_TORCH_STATUS=1"));
  ASSERT_EQ(r.status, 0) << r.output;
  auto lines = lines_of(r.output);
  ASSERT_GE(lines.size(), 8u) << r.output;
  EXPECT_EQ(lines[4], "PyTorch: not measured (torch cannot be imported by python3)");
  EXPECT_EQ(lines[7], "8192          819.5       82.8             n/a            n/a              384                n/a");
  EXPECT_NE(r.output.find(">= 0.95 of PyTorch: NOT met (n/a)"), std::string::npos) << r.output;
  r = run_command(s.run("FAKE_TORCH_STATUS=3"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(lines_of(r.output)[4], "PyTorch: not measured (torch.cuda.is_available() is False)");
  r = run_command(s.run("VRAMSIM_PYTHON=/nonexistent/python3"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(lines_of(r.output)[4], "PyTorch: not measured (/nonexistent/python3 not found)");
}

TEST(DeviceScript, AnOutOfMemorySizeIsARowAndTheStatus) {
  Stubs s;
  const auto r = run_command(s.run("FAKE_OOM=1"));
  EXPECT_EQ(r.status, 6) << r.output;
  const auto lines = lines_of(r.output);
  ASSERT_GE(lines.size(), 9u) << r.output;
  EXPECT_EQ(lines[8].substr(0, 30), "16384        exit 6        n/a") << lines[8];
  EXPECT_NE(s.read("probe-16384.err").find("out of memory"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(s.out + "/probe-16384.json"));
}

TEST(DeviceScript, NoUsableCudaEndsWithTheProbesStatusAndLine) {
  Stubs s;
  write_file(s.dir.file("probe"), "#!/bin/sh\necho 'no CUDA device visible: no NVIDIA driver' >&2\nexit 3\n", 0755);
  const auto r = run_command(s.run());
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_EQ(r.output, "no CUDA device visible: no NVIDIA driver\n");
}

TEST(DeviceScript, BadArgumentsAreStatusTwo) {
  const auto r = run_command(shell_quote(test_support::source_root() + "/tools/device-probe.sh"));
  EXPECT_EQ(r.status, 2) << r.output;
  const auto u = run_command(shell_quote(test_support::source_root() + "/tools/device-probe.sh") + " out --bogus");
  EXPECT_EQ(u.status, 2) << u.output;
}

}  // namespace
}  // namespace vramsim::gpu

#endif  // VRAMSIM_SOURCE_RELATIVE
