#pragma once
// The agent's GPU detection turned into the NodeGpuFacts the advertisement
// models read, and the devices it reports at registration.
#include <string>
#include <vector>

#include "backends/slurm/protocol.hpp"
#include "models/advertisement.hpp"

namespace vramsim::agent {

struct GpuDetection {
  NodeGpuFacts facts;
  std::vector<slurm::AgentDevice> devices;
  std::string source;  // "cuda-runtime", "nvidia-smi" or "" when both failed
  std::string error;   // the detection error, "" when it worked
};

// mode: "auto" (CUDA runtime when built in, nvidia-smi when it finds no
// device), "cuda" or "nvidia-smi". allocated_gpus < 0: the detected count.
GpuDetection detect_gpus(const std::string& mode, const std::string& nvidia_smi, int allocated_gpus);

// Parses "index, memory.used" lines (MiB) of nvidia-smi's
// --query-gpu=index,memory.used --format=csv,noheader,nounits; lines that do
// not parse are skipped.
std::vector<slurm::DeviceUsage> parse_memory_used(const std::string& csv);
inline constexpr const char* kMemoryUsedQuery = "--query-gpu=index,memory.used";
inline constexpr const char* kMemoryUsedFormat = "--format=csv,noheader,nounits";

}  // namespace vramsim::agent
