// tools/device-colocation.sh against a fake command that follows the
// script's protocol and a fake nvidia-smi (shell stubs in a temp folder first
// on PATH): the curve, its interpolated counts, the memory, the statuses.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/backends/cuda/test_support.hpp"

#ifdef VRAMSIM_SOURCE_RELATIVE

namespace vramsim::gpu {
namespace {

using test_support::run_command;
using test_support::shell_quote;
using test_support::TempDir;
using test_support::write_file;

// One copy: appends its pid to $FAKE_PIDS, says it is ready, waits for the
// start file, then reports 100 * g(k) / k requests in 2 s, g = 1, 1.6, 2.1,
// 2.4 for k = 1..4: the aggregate speedup of k copies is g(k). Fails (exit 1)
// as copy FAKE_FAIL_INDEX of k = FAKE_FAIL_K, before it is ready when
// FAKE_FAIL_EARLY is set; never ready with FAKE_NEVER_READY; no valid last
// line with FAKE_BAD_LINE.
constexpr const char* kFakeCommand = R"(#!/bin/sh
echo $$ >> "$FAKE_PIDS"
fail=""
if [ "$VRAMSIM_COLOC_COUNT" = "${FAKE_FAIL_K:-0}" ] && [ "$VRAMSIM_COLOC_INDEX" = "${FAKE_FAIL_INDEX:-0}" ]; then
  fail=1
fi
if [ -n "$fail" ] && [ -n "$FAKE_FAIL_EARLY" ]; then echo "set-up failed" >&2; exit 1; fi
[ -n "$FAKE_NEVER_READY" ] || : > "$VRAMSIM_COLOC_READY_FILE"
while [ ! -e "$VRAMSIM_COLOC_START_FILE" ]; do sleep 0.05; done
sleep "$VRAMSIM_COLOC_SECONDS"
if [ -n "$fail" ]; then echo "out of memory" >&2; exit 1; fi
echo "copy $VRAMSIM_COLOC_INDEX of $VRAMSIM_COLOC_COUNT, warm-up $VRAMSIM_COLOC_WARMUP s"
if [ -n "$FAKE_BAD_LINE" ]; then echo "done"; exit 0; fi
case "$VRAMSIM_COLOC_COUNT" in
  1) n=100 ;;
  2) n=80 ;;
  3) n=70 ;;
  4) n=60 ;;
esac
echo "requests=$n seconds=2"
)";

// 930 MiB for every pid a copy wrote to $FAKE_PIDS, and one process that is
// no copy; exits 9 with FAKE_SMI_FAILS.
constexpr const char* kFakeNvidiaSmi = R"(#!/bin/sh
[ -z "$FAKE_SMI_FAILS" ] || exit 9
case "$*" in
  *--query-compute-apps*) [ -f "$FAKE_PIDS" ] && sed 's/$/, 930/' "$FAKE_PIDS"; echo "1, 5000" ;;
  *--query-gpu=name*) echo "NVIDIA H200" ;;
esac
)";

// Fails the torch check as a Python without torch does.
constexpr const char* kFakePython = R"(#!/bin/sh
echo "ModuleNotFoundError: No module named 'torch'" >&2
exit 1
)";

struct Stubs {
  TempDir dir;
  std::string out;
  Stubs() : out(dir.file("out")) {
    write_file(dir.file("fake"), kFakeCommand, 0755);
    std::filesystem::create_directory(dir.file("bin"));
    write_file(dir.file("bin/nvidia-smi"), kFakeNvidiaSmi, 0755);
  }
  static std::string script() { return shell_quote(test_support::source_root() + "/tools/device-colocation.sh"); }
  // The script on OUT_DIR with `args`, then `-- fake` unless `builtin`.
  std::string run(const std::string& args, const std::string& env = "", bool builtin = false) const {
    const char* path = std::getenv("PATH");
    std::string command = "PATH=" + shell_quote(dir.file("bin") + ":" + (path != nullptr ? path : "/usr/bin:/bin")) +
                          " FAKE_PIDS=" + shell_quote(dir.file("pids")) + " " + env + " " + script() + " " +
                          shell_quote(out) + " " + args;
    if (!builtin) command += " -- " + shell_quote(dir.file("fake"));
    return command;
  }
  std::string read(const std::string& name) const {
    std::ifstream in(out + "/" + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  nlohmann::json curve() const {
    std::ifstream in(out + "/curve.json");
    return nlohmann::json::parse(in, nullptr, false);
  }
};

constexpr const char* kFast = "--seconds 1 --warmup 0";

std::vector<double> doubles(const nlohmann::json& j) { return j.get<std::vector<double>>(); }
std::vector<int> ints(const nlohmann::json& j) { return j.get<std::vector<int>>(); }

TEST(ColocationScript, MeasuredCountsAndTheCurveBetweenThem) {
  Stubs s;
  const auto r = run_command(s.run(std::string("--counts '1 2 4' ") + kFast));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = s.curve();
  ASSERT_TRUE(j.is_object()) << s.read("curve.json");
  EXPECT_EQ(ints(j.at("measured_counts")), (std::vector<int>{1, 2, 4})) << j.dump();
  EXPECT_EQ(doubles(j.at("aggregate_speedup")), (std::vector<double>{1.0, 1.6, 2.4})) << j.dump();
  EXPECT_EQ(doubles(j.at("requests_per_s")), (std::vector<double>{50.0, 80.0, 120.0})) << j.dump();
  EXPECT_EQ(ints(j.at("interpolated_counts")), (std::vector<int>{3})) << j.dump();
  // k = 3 lies halfway between the measured 2 and 4, (1.6 + 2.4) / 2, not the
  // 2.1 the command would have given.
  EXPECT_EQ(doubles(j.at("curve")), (std::vector<double>{1.0, 1.6, 2.0, 2.4})) << j.dump();
  EXPECT_EQ(j.at("per_copy_requests_per_s").get<std::vector<std::vector<double>>>(),
            (std::vector<std::vector<double>>{{50.0}, {40.0, 40.0}, {30.0, 30.0, 30.0, 30.0}}))
      << j.dump();
  EXPECT_EQ(j.at("command").get<std::string>(), s.dir.file("fake"));
  EXPECT_EQ(j.at("seconds").get<int>(), 1);
  EXPECT_EQ(j.at("warmup").get<int>(), 0);
  EXPECT_EQ(j.at("device").get<std::string>(), "NVIDIA H200");
  EXPECT_TRUE(j.at("failed").is_null()) << j.dump();

  const std::string table = s.read("table.txt");
  EXPECT_NE(r.output.find(table), std::string::npos) << r.output;
  EXPECT_NE(table.find("\n2           80.00     1.600  930 930\n"), std::string::npos) << table;
  EXPECT_NE(table.find("\ninterpolated: 3 (2.000)\n"), std::string::npos) << table;
  EXPECT_NE(table.find("\ncurve: 1.000 1.600 2.000 2.400\n"), std::string::npos) << table;
  for (int i = 0; i < 4; ++i) {
    EXPECT_NE(s.read("k4-" + std::to_string(i) + ".out").find("copy " + std::to_string(i) + " of 4, warm-up 0 s"),
              std::string::npos)
        << i;
    EXPECT_TRUE(std::filesystem::exists(s.out + "/k4-" + std::to_string(i) + ".err")) << i;
  }
  EXPECT_FALSE(std::filesystem::exists(s.out + "/k4.start"));
  EXPECT_FALSE(std::filesystem::exists(s.out + "/k4-0.ready"));
}

TEST(ColocationScript, EachCopysLargestMemoryFromNvidiaSmi) {
  Stubs s;
  auto r = run_command(s.run(std::string("--counts '1 2' ") + kFast));
  ASSERT_EQ(r.status, 0) << r.output;
  auto j = s.curve();
  ASSERT_TRUE(j.is_object()) << s.read("curve.json");
  EXPECT_EQ(j.at("memory_mib").dump(), "[[930],[930,930]]");

  // nvidia-smi failing: no memory figures and no device name, not an error.
  r = run_command(s.run(std::string("--counts '1 2' ") + kFast, "FAKE_SMI_FAILS=1"));
  ASSERT_EQ(r.status, 0) << r.output;
  j = s.curve();
  ASSERT_TRUE(j.is_object()) << s.read("curve.json");
  EXPECT_EQ(j.at("memory_mib").dump(), "[null,null]");
  EXPECT_TRUE(j.at("device").is_null()) << j.dump();
  EXPECT_EQ(doubles(j.at("curve")), (std::vector<double>{1.0, 1.6})) << j.dump();
}

TEST(ColocationScript, AFailingCopyIsStatusFourWithTheCountsBefore) {
  Stubs s;
  auto r = run_command(s.run(std::string("--counts '1 2 4' ") + kFast, "FAKE_FAIL_K=4 FAKE_FAIL_INDEX=1"));
  EXPECT_EQ(r.status, 4) << r.output;
  auto j = s.curve();
  ASSERT_TRUE(j.is_object()) << s.read("curve.json");
  EXPECT_EQ(ints(j.at("measured_counts")), (std::vector<int>{1, 2})) << j.dump();
  EXPECT_EQ(doubles(j.at("curve")), (std::vector<double>{1.0, 1.6})) << j.dump();
  EXPECT_EQ(j.at("failed").get<std::string>(),
            "k=4: copy 1 exited with status 1 (logs " + s.out + "/k4-1.out, " + s.out + "/k4-1.err)");
  EXPECT_NE(r.output.find("out of memory"), std::string::npos) << r.output;
  EXPECT_NE(s.read("table.txt").find("\nfailed: k=4: copy 1 exited with status 1"), std::string::npos);

  // Failing before it is ready: the other copies are stopped.
  r = run_command(s.run(std::string("--counts '1 2' ") + kFast, "FAKE_FAIL_K=2 FAKE_FAIL_INDEX=0 FAKE_FAIL_EARLY=1"));
  EXPECT_EQ(r.status, 4) << r.output;
  j = s.curve();
  ASSERT_TRUE(j.is_object()) << s.read("curve.json");
  EXPECT_EQ(ints(j.at("measured_counts")), (std::vector<int>{1})) << j.dump();
  EXPECT_NE(j.at("failed").get<std::string>().find("k=2: copy 0 exited with status 1 before it was ready"),
            std::string::npos)
      << j.dump();

  // No valid last line at k = 1: nothing measured, the file still written.
  r = run_command(s.run(std::string("--counts '1 2' ") + kFast, "FAKE_BAD_LINE=1"));
  EXPECT_EQ(r.status, 4) << r.output;
  j = s.curve();
  ASSERT_TRUE(j.is_object()) << s.read("curve.json");
  EXPECT_TRUE(j.at("curve").empty()) << j.dump();
  EXPECT_NE(j.at("failed").get<std::string>().find("k=1: copy 0 printed no valid last line"), std::string::npos)
      << j.dump();
}

TEST(ColocationScript, TheReadyTimeoutIsStatusFive) {
  Stubs s;
  const auto r =
      run_command(s.run(std::string("--counts '1 2' ") + kFast, "FAKE_NEVER_READY=1 VRAMSIM_COLOC_READY_TIMEOUT=1"));
  EXPECT_EQ(r.status, 5) << r.output;
  const auto j = s.curve();
  ASSERT_TRUE(j.is_object()) << s.read("curve.json");
  EXPECT_TRUE(j.at("measured_counts").empty()) << j.dump();
  EXPECT_NE(j.at("failed").get<std::string>().find("k=1: copies not ready after 1 s: 0"), std::string::npos)
      << j.dump();
}

TEST(ColocationScript, BadArgumentsAreStatusTwo) {
  Stubs s;
  for (const char* counts : {"2 4", "0 1", "1 1", "1 x", "1 65", "1 3 2", ""}) {
    const auto r = run_command(s.run(std::string("--counts ") + shell_quote(counts)));
    EXPECT_EQ(r.status, 2) << counts << ": " << r.output;
    EXPECT_NE(r.output.find("--counts expects integers 1..64, strictly rising, the first one 1"), std::string::npos)
        << counts << ": " << r.output;
  }
  for (const char* args : {"--seconds 0", "--seconds 601", "--warmup x", "--bogus"}) {
    const auto r = run_command(s.run(args));
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
  }
  EXPECT_NE(run_command(s.run("--seconds 0")).output.find("--seconds"), std::string::npos);
  EXPECT_EQ(run_command(Stubs::script()).status, 2);
  EXPECT_EQ(run_command(s.run("--", "", true)).status, 2);
  EXPECT_FALSE(std::filesystem::exists(s.out + "/curve.json"));
}

TEST(ColocationScript, TheBuiltInLoopWithoutTorchIsStatusThree) {
  Stubs s;
  write_file(s.dir.file("python"), kFakePython, 0755);
  auto r = run_command(s.run("", "VRAMSIM_PYTHON=" + shell_quote(s.dir.file("python")), true));
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_NE(r.output.find("the built-in loop needs torch and torchvision"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("No module named 'torch'"), std::string::npos) << r.output;
  r = run_command(s.run("", "VRAMSIM_PYTHON=" + shell_quote(s.dir.file("no-such-python")), true));
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_FALSE(std::filesystem::exists(s.out + "/curve.json"));
}

}  // namespace
}  // namespace vramsim::gpu

#endif  // VRAMSIM_SOURCE_RELATIVE
