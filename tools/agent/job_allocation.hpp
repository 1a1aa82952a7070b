#pragma once
// What SLURM granted this job on this node: CPUs, memory and GPUs read from
// the environment slurmd gives a batch script (and the job's cgroup), so a
// node advertises its allocation, not the host it runs on. Pure functions of
// the environment, for tests; main.cpp passes the real one.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/slurm/protocol.hpp"

namespace vramsim::agent {

// getenv, or a test's map: nullptr when the variable is unset.
using Environment = std::function<const char*(const char*)>;

struct JobAllocation {
  int cpus = 0;
  std::int64_t memory_bytes = 0;
  // Where each figure came from ("SLURM_CPUS_ON_NODE", "--num-cpus",
  // "SLURM_MEM_PER_NODE", "cgroup memory.max", "host", ...): the agent's
  // registration carries them, so a surprising figure can be traced.
  std::string cpus_from, memory_from;
  std::string gpus_from;  // "CUDA_VISIBLE_DEVICES=2,3", or "every device listed"
  // CUDA_VISIBLE_DEVICES as a list (what SLURM's gres plugin set); nullopt
  // when unset, so every device listed is the job's.
  std::optional<std::vector<std::string>> visible_gpus;
};

// cpus: SLURM_CPUS_ON_NODE, else `num_cpus` (>= 0 when given), else the
// host's. memory: SLURM_MEM_PER_NODE MiB, else SLURM_MEM_PER_CPU MiB x cpus,
// else `cgroup_limit` (the job's memory.max, when it has one), else the
// host's physical memory. A variable that is not a positive whole number is
// passed over, never trusted.
JobAllocation read_job_allocation(const Environment& env, int num_cpus, int host_cpus, std::int64_t host_memory,
                                  std::optional<std::int64_t> cgroup_limit);

// The memory limit of this process's cgroup (v2 memory.max, else v1
// memory.limit_in_bytes), nullopt when there is none or it cannot be read.
std::optional<std::int64_t> cgroup_memory_limit();

// Positions, in a listing of `listed` devices (nvidia-smi's rows, in its
// index order), of the job's CUDA ordinals 0, 1, ...: the entries of
// `visible` when they are indices into the listing, the listing itself
// when it shows exactly the job's devices (a cgroup hides the others) or
// when nothing restricts them. nullopt when they cannot be matched (UUIDs
// on an unconstrained node): then no device is keyed wrongly.
std::optional<std::vector<int>> job_device_positions(std::size_t listed,
                                                     const std::optional<std::vector<std::string>>& visible);

// nvidia-smi's memory.used rows (keyed by its index) re-keyed by the job's
// CUDA ordinals, as replicas are placed; rows of other jobs' GPUs dropped.
std::vector<slurm::DeviceUsage> usage_by_ordinal(const std::vector<slurm::DeviceUsage>& rows,
                                                 const std::optional<std::vector<std::string>>& visible);

}  // namespace vramsim::agent
