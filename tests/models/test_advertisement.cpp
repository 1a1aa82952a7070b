#include "models/advertisement.hpp"
#include "models/worker_sbatch_script.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "models/registry.hpp"

namespace vramsim {
namespace fs = std::filesystem;
namespace {

std::shared_ptr<const AdvertisementPolicy> advertisement(const std::string& variant) {
  return PolicyRegistry::instance().make<AdvertisementPolicy>(variant);
}

NodeGpuFacts a100(int gpus) {
  NodeGpuFacts f;
  f.gpus = gpus;
  f.memory_total_mb.assign(static_cast<std::size_t>(gpus), 40960);
  return f;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// --- advertise() ----------------------------------------------------------------------------

TEST(Advertisement, LegacyAdvertisesOnlyTheJobId) {
  for (int gpus : {0, 1, 2}) {
    const auto a = advertisement("legacy")->advertise("17", a100(gpus));
    EXPECT_TRUE(a.resources == (ResourceSet{{"slurm_job_id:17", 1}})) << a.resources.to_json().dump();
    EXPECT_TRUE(a.notice.empty());
  }
}

TEST(Advertisement, FixedAdvertisesVramOnSingleGpuWorker) {
  const auto a = advertisement("fixed")->advertise("17", a100(1));
  EXPECT_EQ(a.resources.get("slurm_job_id:17"), 1.0);
  EXPECT_EQ(a.resources.get(kVramMB), 40960.0);
  EXPECT_TRUE(a.notice.empty());
}

TEST(Advertisement, FixedNeverAdvertisesVramOnZeroOrMultiGpuWorkers) {
  for (int gpus : {0, 2, 4}) {
    const auto a = advertisement("fixed")->advertise("17", a100(gpus));
    EXPECT_FALSE(a.resources.has(kVramMB)) << gpus << " GPUs";
    EXPECT_EQ(a.resources.get("slurm_job_id:17"), 1.0);
  }
}

TEST(Advertisement, FixedWithoutNvidiaSmiStartsWithoutVramAndSaysSo) {
  auto f = a100(1);
  f.nvidia_smi_present = false;
  const auto a = advertisement("fixed")->advertise("17", f);
  EXPECT_FALSE(a.resources.has(kVramMB));
  EXPECT_TRUE(a.resources.has("slurm_job_id:17"));
  EXPECT_TRUE(contains(a.notice, "nvidia-smi")) << a.notice;
}

TEST(Advertisement, FixedWithFailingNvidiaSmiStartsWithoutVramAndSaysSo) {
  auto f = a100(1);
  f.nvidia_smi_fails = true;
  const auto a = advertisement("fixed")->advertise("17", f);
  EXPECT_FALSE(a.resources.has(kVramMB));
  EXPECT_FALSE(a.notice.empty());
}

TEST(Advertisement, FixedWithMigEnabledStartsWithoutVramAndSaysSo) {
  auto f = a100(1);
  f.mig_enabled = true;
  const auto a = advertisement("fixed")->advertise("17", f);
  EXPECT_FALSE(a.resources.has(kVramMB));
  EXPECT_TRUE(contains(a.notice, "MIG")) << a.notice;
}

TEST(Advertisement, UngatedSumsDevicesOnTwoGpuNode) {
  NodeGpuFacts f;
  f.gpus = 2;
  f.memory_total_mb = {40960, 24576};
  const auto a = advertisement("ungated")->advertise("17", f);
  EXPECT_EQ(a.resources.get(kVramMB), 65536.0) << "more than either device holds";
  EXPECT_EQ(advertisement("ungated")->advertise("17", a100(1)).resources.get(kVramMB), 40960.0);
  EXPECT_FALSE(advertisement("ungated")->advertise("17", a100(0)).resources.has(kVramMB));
}

TEST(Advertisement, HeadAdvertisesVramOnlyWithExactlyOneWorkingGpu) {
  EXPECT_EQ(head_vram_mb(a100(1)), std::optional<std::int64_t>{40960});
  EXPECT_FALSE(head_vram_mb(a100(0)));
  EXPECT_FALSE(head_vram_mb(a100(2)));
  auto absent = a100(1);
  absent.nvidia_smi_present = false;
  EXPECT_FALSE(head_vram_mb(absent));
  auto fails = a100(1);
  fails.nvidia_smi_fails = true;
  EXPECT_FALSE(head_vram_mb(fails));
  auto zero = a100(1);
  zero.memory_total_mb = {0};
  EXPECT_FALSE(head_vram_mb(zero)) << "`if vram_mb:` skips 0";
}

// _detect_gpu_vram_mb never asks nvidia-smi about MIG, where the worker's
// sbatch block does: a MIG head advertises the whole device, a MIG worker
// nothing.
TEST(Advertisement, TheHeadDoesNotCheckMigWhereTheWorkerDoes) {
  auto mig = a100(1);
  mig.mig_enabled = true;
  EXPECT_EQ(head_vram_mb(mig), std::optional<std::int64_t>{40960});
  EXPECT_FALSE(advertisement("fixed")->advertise("17", mig).resources.has(kVramMB));
}

// --- render_sbatch_script() ---------------------------------------------------------------------

WorkerJobSize job(int gpus) {
  WorkerJobSize s;
  s.gpus = gpus;
  s.cpus = 8;
  s.mem_per_cpu_gb = 16;
  s.time_limit = 4 * kHour;
  return s;
}

SbatchOptions options(const std::string& workspace = "/tmp/vramsim") {
  SbatchOptions o;
  o.workspace_dir = workspace;
  return o;
}

TEST(SbatchScript, FixedEmitsVramDetectionOnlyForOneGpu) {
  const auto fixed = advertisement("fixed");
  EXPECT_FALSE(contains(render_sbatch_script(job(0), *fixed, options()), "VRAM_MB"));
  EXPECT_TRUE(contains(render_sbatch_script(job(1), *fixed, options()), "VRAM_MB"));
  EXPECT_FALSE(contains(render_sbatch_script(job(2), *fixed, options()), "VRAM_MB"));
}

TEST(SbatchScript, LegacyNeverEmitsVramDetection) {
  for (int gpus : {0, 1, 2})
    EXPECT_FALSE(contains(render_sbatch_script(job(gpus), *advertisement("legacy"), options()), "VRAM_MB"));
}

TEST(SbatchScript, GpusDirectiveOmittedForZero) {
  const auto fixed = advertisement("fixed");
  EXPECT_FALSE(contains(render_sbatch_script(job(0), *fixed, options()), "--gpus"));
  EXPECT_TRUE(contains(render_sbatch_script(job(1), *fixed, options()), "#SBATCH --gpus=1\n"));
  EXPECT_TRUE(contains(render_sbatch_script(job(2), *fixed, options()), "#SBATCH --gpus=2\n"));
}

TEST(SbatchScript, DirectivesMatchTheReferenceJob) {
  auto size = job(1);
  size.extra_sbatch_args = {"-C thin", "", "--account=proj"};
  const std::string s = render_sbatch_script(size, *advertisement("fixed"), options("/ws"));
  EXPECT_EQ(s.rfind("#!/bin/bash\n", 0), 0u);
  for (const char* line :
       {"#SBATCH --job-name=ray_worker\n", "#SBATCH --ntasks=1\n", "#SBATCH --nodes=1\n",
        "#SBATCH --cpus-per-task=8\n", "#SBATCH --mem-per-cpu=16G\n", "#SBATCH --time=4:00:00\n",
        "#SBATCH --chdir=/ws\n", "#SBATCH --output=/ws/slurm_logs/%x_%j.out\n",
        "#SBATCH --error=/ws/slurm_logs/%x_%j.err\n", "#SBATCH -C thin\n", "#SBATCH --account=proj\n"})
    EXPECT_TRUE(contains(s, line)) << "missing " << line << "in\n" << s;
  EXPECT_FALSE(contains(s, "#SBATCH \n")) << "empty extra args are skipped";
  // Extra lines come after the standard directives, before the body.
  EXPECT_LT(s.find("--error="), s.find("-C thin"));
  EXPECT_LT(s.find("--account=proj"), s.find("SLURM_JOB_ID"));
}

// The site's settings as their own #SBATCH lines; a GPU type asks for the
// GPUs as a typed gres instead of --gpus.
TEST(SbatchScript, SiteSettingsAndATypedGpuRequest) {
  auto size = job(2);
  size.slurm = SlurmJobOptions{"gpu-a100", "proj_42", "normal", "ib&nvme", "maint.1", "a100"};
  const std::string s = render_sbatch_script(size, *advertisement("fixed"), options("/ws"));
  for (const char* line : {"#SBATCH --gres=gpu:a100:2\n", "#SBATCH --partition=gpu-a100\n", "#SBATCH --account=proj_42\n",
                           "#SBATCH --qos=normal\n", "#SBATCH --constraint=ib&nvme\n",
                           "#SBATCH --reservation=maint.1\n"})
    EXPECT_TRUE(contains(s, line)) << "missing " << line << "in\n" << s;
  EXPECT_FALSE(contains(s, "--gpus=")) << s;
  // Without them, nothing of the kind is written.
  const std::string plain = render_sbatch_script(job(2), *advertisement("fixed"), options("/ws"));
  for (const char* flag : {"--partition", "--account", "--qos", "--constraint", "--reservation", "--gres"})
    EXPECT_FALSE(contains(plain, flag)) << flag;
  EXPECT_EQ(slurm_option_problem("partition", "gpu-a100"), "");
  EXPECT_NE(slurm_option_problem("partition", "a b").find("partition: expected letters"), std::string::npos);
  EXPECT_NE(slurm_option_problem("account", "x\n#SBATCH --uid=0").find("expected letters"), std::string::npos);
  EXPECT_EQ(slurm_option_problem("constraint", "[rack1|rack2]&ib"), "");
  EXPECT_NE(slurm_option_problem("qos", "a&b").find("qos: expected"), std::string::npos);
  EXPECT_NE(slurm_option_problem("qos", std::string(129, 'q')).find("at most 128"), std::string::npos);
}

TEST(SbatchScript, BodyRefusesToRunOutsideSlurm) {
  const std::string s = render_sbatch_script(job(1), *advertisement("fixed"), options());
  const auto guard = s.find("if [ -z \"$SLURM_JOB_ID\" ]; then");
  ASSERT_NE(guard, std::string::npos);
  const auto exit1 = s.find("exit 1", guard);
  ASSERT_NE(exit1, std::string::npos);
  EXPECT_LT(exit1, s.find("Ray resources"));
  EXPECT_TRUE(contains(s, "--block"));
}

TEST(SbatchScript, TimeLimitFollowsTheJobSize) {
  auto size = job(0);
  size.time_limit = 30 * kHour;
  EXPECT_TRUE(contains(render_sbatch_script(size, *advertisement("legacy"), options()), "#SBATCH --time=1-06:00:00\n"));
}

// --- running the rendered script ------------------------------------------------------------------

struct ScriptResult {
  int status = -1;
  std::string output;
};

// A scratch directory with a `tools` folder holding only what the script
// needs besides nvidia-smi, so the host's own nvidia-smi never leaks in.
class SbatchScriptRun : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "vramsim-sbatch-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir = tmpl;
    fs::create_directories(dir / "tools");
    fs::create_directories(dir / "fake");
    for (const char* tool : {"head", "tr", "mkdir", "awk"}) {
      for (const char* where : {"/usr/bin/", "/bin/"}) {
        const fs::path src = std::string(where) + tool;
        if (fs::exists(src)) {
          fs::create_symlink(src, dir / "tools" / tool);
          break;
        }
      }
    }
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  void fake_nvidia_smi(const std::string& memory, const std::string& mig, int exit_code = 0) {
    const fs::path p = dir / "fake" / "nvidia-smi";
    std::ofstream(p) << "#!/bin/bash\n"
                     << "case \"$*\" in\n"
                     << "  *memory.total*) echo \"" << memory << "\" ;;\n"
                     << "  *mig.mode.current*) echo \"" << mig << "\" ;;\n"
                     << "esac\n"
                     << "exit " << exit_code << "\n";
    fs::permissions(p, fs::perms::owner_all);
  }

  ScriptResult run(const WorkerJobSize& size, const std::string& variant, const std::string& job_env = "SLURM_JOB_ID=17") {
    SbatchOptions o = options((dir / "ws").string());
    o.start_command = "echo START";
    const fs::path script = dir / "job.sh";
    std::ofstream(script) << render_sbatch_script(size, *advertisement(variant), o);
    const std::string cmd = "cd '" + dir.string() + "' && env -i PATH='" + (dir / "fake").string() + ":" +
                            (dir / "tools").string() + "' " + job_env + " /bin/bash '" + script.string() +
                            "' 2>&1";
    ScriptResult r;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return r;
    std::array<char, 512> buf{};
    while (std::fgets(buf.data(), buf.size(), pipe)) r.output += buf.data();
    const int st = pclose(pipe);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
  }

  static std::string resources_line(const std::string& out) {
    const auto at = out.find("Ray resources:");
    return at == std::string::npos ? "" : out.substr(at, out.find('\n', at) - at);
  }

  fs::path dir;
};

TEST_F(SbatchScriptRun, FixedOneGpuAdvertisesDetectedMemory) {
  fake_nvidia_smi("40960", "Disabled");
  const ScriptResult r = run(job(1), "fixed");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string line = resources_line(r.output);
  EXPECT_TRUE(contains(line, "\"slurm_job_id:17\": 1")) << r.output;
  EXPECT_TRUE(contains(line, "\"VRAM_MB\": 40960")) << r.output;
  EXPECT_FALSE(contains(r.output, "Notice")) << r.output;
  EXPECT_TRUE(contains(r.output, "START --resources {\"slurm_job_id:17\": 1, \"VRAM_MB\": 40960} --block"))
      << r.output;
  EXPECT_TRUE(fs::is_directory(dir / "ws" / "slurm_logs"));
}

TEST_F(SbatchScriptRun, FixedOneGpuWithMigEnabledStartsWithoutVram) {
  fake_nvidia_smi("40960", "Enabled");
  const ScriptResult r = run(job(1), "fixed");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string line = resources_line(r.output);
  EXPECT_TRUE(contains(line, "\"slurm_job_id:17\": 1")) << r.output;
  EXPECT_FALSE(contains(line, "VRAM_MB")) << r.output;
  EXPECT_TRUE(contains(r.output, "Notice")) << r.output;
}

TEST_F(SbatchScriptRun, FixedOneGpuWithFailingNvidiaSmiStartsWithoutVram) {
  // A broken driver: nvidia-smi prints its complaint on stdout and exits 9.
  fake_nvidia_smi("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
                  "NVIDIA-SMI has failed", 9);
  const ScriptResult r = run(job(1), "fixed");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(contains(resources_line(r.output), "VRAM_MB")) << r.output;
  EXPECT_TRUE(contains(r.output, "Notice")) << r.output;
}

TEST_F(SbatchScriptRun, FixedOneGpuWithoutNvidiaSmiStartsWithoutVram) {
  const ScriptResult r = run(job(1), "fixed");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(contains(resources_line(r.output), "VRAM_MB")) << r.output;
  EXPECT_TRUE(contains(r.output, "Notice: nvidia-smi not found")) << r.output;
}

TEST_F(SbatchScriptRun, FixedTwoGpuWorkerNeverQueriesVram) {
  fake_nvidia_smi("40960", "Disabled");
  const ScriptResult r = run(job(2), "fixed");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(resources_line(r.output), "Ray resources: {\"slurm_job_id:17\": 1}") << r.output;
}

TEST_F(SbatchScriptRun, LegacyOneGpuAdvertisesOnlyTheJobId) {
  fake_nvidia_smi("40960", "Disabled");
  const ScriptResult r = run(job(1), "legacy");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(resources_line(r.output), "Ray resources: {\"slurm_job_id:17\": 1}") << r.output;
}

TEST_F(SbatchScriptRun, UngatedTwoGpuWorkerAdvertisesTheSum) {
  const fs::path p = dir / "fake" / "nvidia-smi";
  std::ofstream(p) << "#!/bin/bash\n"
                   << "case \"$*\" in\n"
                   << "  *memory.total*) echo 40960; echo 40960 ;;\n"
                   << "  *mig.mode.current*) echo Disabled; echo Disabled ;;\n"
                   << "esac\n";
  fs::permissions(p, fs::perms::owner_all);
  const ScriptResult r = run(job(2), "ungated");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(resources_line(r.output), "\"VRAM_MB\": 81920")) << r.output;
}

TEST_F(SbatchScriptRun, ExitsWithOneWithoutSlurmJobId) {
  fake_nvidia_smi("40960", "Disabled");
  const ScriptResult r = run(job(1), "fixed", "");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "SLURM_JOB_ID is not set")) << r.output;
  EXPECT_FALSE(contains(r.output, "START")) << r.output;
}

}  // namespace
}  // namespace vramsim
