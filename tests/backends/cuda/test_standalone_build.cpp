// The probe's standalone build (tools/probe/standalone): configured and
// compiled into its own temp folder with nothing but the CUDA toolkit and
// the compiler, as a GPU host would. Skipped where no toolkit is built in.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
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

TEST(StandaloneBuild, BuildsWithOnlyTheToolkitAndRunsWithoutADevice) {
  if (!cuda_built_in()) GTEST_SKIP() << "no CUDA toolkit in this build";
  const auto cmake = find_executable("cmake");
  if (!cmake) GTEST_SKIP() << "cmake not on PATH";
  TempDir dir;
  const std::string build = dir.file("build");
  // Makefiles keep each object's dependency file (.o.d) for the check below;
  // no optimisation keeps the compile short; ccache where it is installed.
  std::string configure = shell_quote(*cmake) + " -S " +
                          shell_quote(test_support::source_root() + "/tools/probe/standalone") + " -B " +
                          shell_quote(build) + " -G 'Unix Makefiles' -DCMAKE_BUILD_TYPE=None -DVRAMSIM_WERROR=ON";
  if (find_executable("ccache")) configure += " -DCMAKE_CXX_COMPILER_LAUNCHER=ccache";
  auto r = run_command(configure);
  ASSERT_EQ(r.status, 0) << r.output;
  r = run_command(shell_quote(*cmake) + " --build " + shell_quote(build) + " -j 2");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string probe = build + "/vramsim-probe";
  ASSERT_TRUE(std::filesystem::exists(probe));
  ASSERT_TRUE(std::filesystem::exists(build + "/libvramsim_device_memory.a"));

  // No header of the project's libraries was read: a GPU host lacks them.
  int depfiles = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(build)) {
    const auto name = e.path().filename().string();
    if (name.size() < 4 || name.substr(name.size() - 4) != ".o.d") continue;
    ++depfiles;
    std::ifstream in(e.path());
    std::stringstream deps;
    deps << in.rdbuf();
    for (const char* lib : {"nlohmann/", "CLI/", "boost/", "eigen3/", "Eigen/", "gtest/"})
      EXPECT_EQ(deps.str().find(lib), std::string::npos) << name << " includes " << lib;
  }
  EXPECT_GE(depfiles, 15);

  // The built probe answers like the project's.
  r = run_command(shell_quote(probe) + " --peak-for 'NVIDIA H100 PCIe'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("\"dense_fp16_tflops\":756.5"), std::string::npos) << r.output;
  r = run_command(shell_quote(probe) + " --bogus");
  EXPECT_EQ(r.status, 2) << r.output;
  r = run_command("VRAMSIM_CUBLASLT=" + shell_quote(dir.file("none.so")) + " " + shell_quote(probe) + " --n 64");
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_EQ(r.output.rfind("no usable CUDA: cuBLASLt cannot be loaded", 0), 0u) << r.output;
  EXPECT_EQ(lines_of(r.output).size(), 1u) << r.output;
}

}  // namespace
}  // namespace vramsim::gpu

#endif  // VRAMSIM_SOURCE_RELATIVE
