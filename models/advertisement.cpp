#include "models/advertisement.hpp"

#include <numeric>
#include <sstream>

#include "models/registry.hpp"

namespace vramsim {
namespace {

ResourceSet base_resources(const std::string& job_id) {
  ResourceSet r;
  r.set(slurm_job_resource(job_id), 1);
  return r;
}

// The detection block: query memory.total on the single allocated GPU unless
// MIG is on; on any failure log a notice and start without VRAM_MB.
const char* kVramDetection = R"(VRAM_RESOURCE=""
if command -v nvidia-smi >/dev/null 2>&1; then
  MIG_MODE=$(nvidia-smi --query-gpu=mig.mode.current --format=csv,noheader 2>/dev/null | head -n1)
  VRAM_MB=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -n1 | tr -d ' ')
  if [ "$MIG_MODE" != "Enabled" ] && [ -n "$VRAM_MB" ] && [ "$VRAM_MB" -gt 0 ] 2>/dev/null; then
    VRAM_RESOURCE=", \"VRAM_MB\": ${VRAM_MB}"
  else
    echo "Notice: could not detect GPU memory (MIG or nvidia-smi failure); starting without VRAM_MB"
  fi
else
  echo "Notice: nvidia-smi not found; starting without VRAM_MB"
fi
)";

// legacy: only the job id; the worker never tells Ray how much VRAM it has.
class LegacyAdvertisement final : public AdvertisementPolicy {
 public:
  Advertisement advertise(const std::string& job_id, const NodeGpuFacts&) const override {
    return {base_resources(job_id), ""};
  }
  std::string vram_block(int) const override { return ""; }
};

// Why a one-GPU worker cannot advertise VRAM_MB; empty when it can: the
// sbatch block's gate (the head's own detection, below, asks less).
std::string single_gpu_blocker(const NodeGpuFacts& f) {
  if (!f.nvidia_smi_present) return "nvidia-smi not found; starting without VRAM_MB";
  if (f.nvidia_smi_fails || f.memory_total_mb.empty() || f.memory_total_mb[0] <= 0)
    return "could not detect GPU memory (nvidia-smi failure); starting without VRAM_MB";
  if (f.mig_enabled) return "could not detect GPU memory (MIG enabled); starting without VRAM_MB";
  return "";
}

// fixed: exactly one GPU, nvidia-smi works, MIG off -> VRAM_MB = memory.total.
class GatedAdvertisement final : public AdvertisementPolicy {
 public:
  Advertisement advertise(const std::string& job_id, const NodeGpuFacts& f) const override {
    Advertisement a{base_resources(job_id), ""};
    if (f.gpus != 1) return a;
    if (const std::string why = single_gpu_blocker(f); why.empty())
      a.resources.set(kVramMB, static_cast<double>(f.memory_total_mb[0]));
    else
      a.notice = why;
    return a;
  }
  std::string vram_block(int num_gpus) const override {
    return num_gpus == 1 ? kVramDetection : "";
  }
};

// ungated: advertises the SUM over all devices, as a node-level VRAM_MB would
// be on a multi-GPU node. Exists to show the over-claim hazard.
class UngatedAdvertisement final : public AdvertisementPolicy {
 public:
  Advertisement advertise(const std::string& job_id, const NodeGpuFacts& f) const override {
    Advertisement a{base_resources(job_id), ""};
    if (f.gpus < 1) return a;
    if (!f.nvidia_smi_present || f.nvidia_smi_fails || f.mig_enabled || f.memory_total_mb.empty()) {
      a.notice = "could not detect GPU memory; starting without VRAM_MB";
      return a;
    }
    auto total = std::accumulate(f.memory_total_mb.begin(), f.memory_total_mb.end(), std::int64_t{0});
    a.resources.set(kVramMB, static_cast<double>(total));
    return a;
  }
  std::string vram_block(int num_gpus) const override {
    if (num_gpus < 1) return "";
    std::string b = kVramDetection;
    // Sum every line instead of taking the first.
    const std::string first = "| head -n1 | tr -d ' ')";
    auto pos = b.find(first, b.find("VRAM_MB=$("));
    b.replace(pos, first.size(), "| awk '{s+=$1} END {print s}')");
    return b;
  }
};

}  // namespace

std::optional<std::int64_t> head_vram_mb(const NodeGpuFacts& f) {
  if (f.gpus != 1 || !f.nvidia_smi_present || f.nvidia_smi_fails || f.memory_total_mb.empty()) return std::nullopt;
  for (const auto mb : f.memory_total_mb)
    if (mb != f.memory_total_mb.front()) return std::nullopt;
  if (f.memory_total_mb.front() <= 0) return std::nullopt;  // `if vram_mb:` skips 0
  return f.memory_total_mb.front();
}

void register_advertisement_policies(PolicyRegistry& r) {
  r.add<AdvertisementPolicy, LegacyAdvertisement>("legacy");
  r.add<AdvertisementPolicy, GatedAdvertisement>("fixed");
  r.add<AdvertisementPolicy, UngatedAdvertisement>("ungated");
}

}  // namespace vramsim
