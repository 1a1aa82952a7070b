#pragma once
// Worker advertisement: what a SLURM worker adds to its Ray resources when it
// starts on the allocated node (reference-semantics section 2). Detection runs
// inside the job because only the allocated node knows its own GPU size.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/resources.hpp"
#include "models/worker_defaults.hpp"

namespace vramsim {

// What the job's shell sees on the allocated node.
struct NodeGpuFacts {
  int gpus = 0;                              // GPUs allocated to the job
  bool nvidia_smi_present = true;
  bool nvidia_smi_fails = false;             // present but exits non-zero
  bool mig_enabled = false;
  std::vector<std::int64_t> memory_total_mb; // nvidia-smi memory.total per GPU
};

struct Advertisement {
  ResourceSet resources;        // slurm_job_id:<id> = 1, maybe VRAM_MB
  std::string notice;           // logged by the job when detection fell back
};

class AdvertisementPolicy {
 public:
  static constexpr const char* kModel = "advertisement";
  virtual ~AdvertisementPolicy() = default;
  virtual Advertisement advertise(const std::string& job_id, const NodeGpuFacts& facts) const = 0;
  // The shell lines the sbatch script runs to detect and append VRAM_MB for a
  // worker of `num_gpus` GPUs; empty when this policy advertises nothing.
  virtual std::string vram_block(int num_gpus) const = 0;
};

// The head's VRAM_MB, in every variant (the seeds' fix gated workers "matching
// the existing invariant for the head node"): RayCluster._detect_gpu_vram_mb
// (ray_cluster.py:692-722@fba5ffe), gated on head_num_gpus == 1
// (ray_cluster.py:788-794): nvidia-smi's memory.total of the visible GPUs,
// none when nvidia-smi is missing or fails or the GPUs differ in size. Unlike
// the worker's sbatch block it never asks about MIG, so a MIG head advertises
// the whole device.
std::optional<std::int64_t> head_vram_mb(const NodeGpuFacts& head);

}  // namespace vramsim
