#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cuda/error.hpp"

namespace vramsim::gpu {

struct GpuInfo {
  int index = 0;                         // enumeration order of the source
  std::string name;
  std::int64_t total_mb = 0;             // MiB
  std::optional<std::int64_t> free_mb;   // MiB; unknown from nvidia-smi's query
  std::optional<bool> mig_enabled;       // unknown where it cannot be queried
};

struct GpuInventory {
  std::string source;  // "cuda-runtime" or "nvidia-smi"
  std::vector<GpuInfo> devices;
};

// The query NvidiaSmiDetector runs; parse_nvidia_smi_csv expects its output.
inline constexpr const char* kNvidiaSmiQueryArgs =
    "--query-gpu=name,memory.total,mig.mode.current --format=csv,noheader,nounits";

// Parses "name, memory.total, mig.mode.current" lines. MIG mode: "Enabled",
// "Disabled", or "[N/A]"/"N/A" (unknown). Blank lines are skipped; any other
// malformed line is a DetectionFailed error naming the line number.
Expected<GpuInventory> parse_nvidia_smi_csv(std::string_view csv);

// One line: {"source": ..., "devices": [{"index", "name", "total_mb",
// "free_mb", "mig_enabled"}]}; unknown fields are null.
std::string inventory_json(const GpuInventory& inventory);

}  // namespace vramsim::gpu

#ifndef VRAMSIM_PROBE_STANDALONE
#include <nlohmann/json.hpp>

namespace vramsim::gpu {
// inventory_json's line as a JSON value (json_bridge.cpp).
nlohmann::ordered_json to_json(const GpuInventory& inventory);
}  // namespace vramsim::gpu
#endif
