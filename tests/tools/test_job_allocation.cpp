// What a node agent advertises: the job's allocation as SLURM granted it,
// and GPU memory keyed by the job's CUDA ordinals (tools/agent/job_allocation).
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "tools/agent/job_allocation.hpp"

namespace vramsim::agent {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;
constexpr std::int64_t kHost = std::int64_t{256} << 30;

Environment env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(JobAllocation, TheJobsGrantIsAdvertisedNotTheHost) {
  auto a = read_job_allocation(env_of({{"SLURM_CPUS_ON_NODE", "8"}, {"SLURM_MEM_PER_NODE", "32768"}}), 4, 64, kHost,
                               std::nullopt);
  EXPECT_EQ(a.cpus, 8) << "what SLURM granted, not what the head asked";
  EXPECT_EQ(a.cpus_from, "SLURM_CPUS_ON_NODE");
  EXPECT_EQ(a.memory_bytes, 32768 * kMiB);
  EXPECT_EQ(a.memory_from, "SLURM_MEM_PER_NODE");
}

TEST(JobAllocation, MemoryPerCpuIsTimesTheCpusGranted) {
  auto a = read_job_allocation(env_of({{"SLURM_CPUS_ON_NODE", "4"}, {"SLURM_MEM_PER_CPU", "2048"}}), -1, 64, kHost,
                               std::nullopt);
  EXPECT_EQ(a.memory_bytes, 4 * 2048 * kMiB);
  EXPECT_EQ(a.memory_from, "SLURM_MEM_PER_CPU x 4");
}

TEST(JobAllocation, OutsideSlurmTheCgroupThenTheHost) {
  auto a = read_job_allocation(env_of({}), 6, 64, kHost, std::int64_t{8} << 30);
  EXPECT_EQ(a.cpus, 6);
  EXPECT_EQ(a.cpus_from, "--num-cpus");
  EXPECT_EQ(a.memory_bytes, std::int64_t{8} << 30);
  EXPECT_EQ(a.memory_from, "cgroup memory limit");
  a = read_job_allocation(env_of({}), -1, 64, kHost, std::nullopt);
  EXPECT_EQ(a.cpus, 64);
  EXPECT_EQ(a.cpus_from, "host");
  EXPECT_EQ(a.memory_bytes, kHost);
  EXPECT_EQ(a.memory_from, "host");
  // A cgroup limit above the host's memory is no limit.
  EXPECT_EQ(read_job_allocation(env_of({}), -1, 64, kHost, kHost * 2).memory_from, "host");
}

TEST(JobAllocation, VariablesThatAreNotPositiveWholeNumbersArePassedOver) {
  for (const std::string bad : {"", "0", "-4", "8x", "1e3", " 8", "99999999999999999999"}) {
    auto a = read_job_allocation(env_of({{"SLURM_CPUS_ON_NODE", bad}, {"SLURM_MEM_PER_NODE", bad}}), 3, 64, kHost,
                                 std::nullopt);
    EXPECT_EQ(a.cpus_from, "--num-cpus") << "'" << bad << "'";
    EXPECT_EQ(a.memory_from, "host") << "'" << bad << "'";
  }
  // MiB figures whose bytes would not fit are passed over, not wrapped.
  auto a = read_job_allocation(env_of({{"SLURM_MEM_PER_NODE", "9000000000000000"}}), 3, 64, kHost, std::nullopt);
  EXPECT_EQ(a.memory_from, "host");
  a = read_job_allocation(env_of({{"SLURM_CPUS_ON_NODE", "4096"}, {"SLURM_MEM_PER_CPU", "4000000000000000"}}), 3, 64,
                          kHost, std::nullopt);
  EXPECT_EQ(a.memory_from, "host");
}

TEST(JobAllocation, CudaVisibleDevicesIsRead) {
  auto a = read_job_allocation(env_of({{"CUDA_VISIBLE_DEVICES", "2,3"}}), -1, 64, kHost, std::nullopt);
  ASSERT_TRUE(a.visible_gpus);
  EXPECT_EQ(*a.visible_gpus, (std::vector<std::string>{"2", "3"}));
  EXPECT_FALSE(read_job_allocation(env_of({}), -1, 64, kHost, std::nullopt).visible_gpus);
}

using Visible = std::optional<std::vector<std::string>>;

TEST(JobDevices, IndicesIntoTheListingPickTheJobsGpusInCudaOrder) {
  EXPECT_EQ(job_device_positions(8, Visible({"5", "2"})), (std::vector<int>{5, 2}));
  EXPECT_EQ(job_device_positions(2, std::nullopt), (std::vector<int>{0, 1}));
  // A cgroup shows the job's one GPU as nvidia-smi's only row, whatever
  // index SLURM named it by.
  EXPECT_EQ(job_device_positions(1, Visible({"3"})), (std::vector<int>{0}));
  // UUIDs on a node that shows every GPU cannot be matched by position.
  EXPECT_FALSE(job_device_positions(8, Visible({"GPU-0a1b"})));
  EXPECT_EQ(job_device_positions(1, Visible({"GPU-0a1b"})), (std::vector<int>{0}));
}

TEST(JobDevices, HeartbeatMemoryIsKeyedAsReplicasAre) {
  // An 8-GPU node, the job holding physical GPUs 5 and 2: nvidia-smi's rows
  // 5 and 2 become ordinals 0 and 1 (what a replica on device 0 sees as its
  // CUDA device 0); the other jobs' rows are dropped.
  std::vector<slurm::DeviceUsage> rows;
  for (int i = 0; i < 8; ++i) rows.push_back({i, (i + 1) * kMiB});
  auto got = usage_by_ordinal(rows, Visible({"5", "2"}));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].index, 0);
  EXPECT_EQ(got[0].used_bytes, 6 * kMiB);
  EXPECT_EQ(got[1].index, 1);
  EXPECT_EQ(got[1].used_bytes, 3 * kMiB);
  EXPECT_TRUE(usage_by_ordinal(rows, Visible({"GPU-0a1b"})).empty()) << "unmatched: no figure rather than a wrong one";
  EXPECT_EQ(usage_by_ordinal(rows, std::nullopt).size(), 8u);
}

}  // namespace
}  // namespace vramsim::agent
