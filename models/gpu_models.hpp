#pragma once
// The GPU model table: per model its VRAM and dense fp16 throughput, the
// figures capacity planning weighs GPUs by. It covers the models the bundled
// traces name (openb, PAI 2020, the 2026 spot list) and the common datacenter
// GPUs; sources and assumptions are in docs/gpu-models.md. Undisclosed trace
// models (openb G1-G3) carry assumed figures a scenario may override.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vramsim {

struct GpuModel {
  std::string name;          // short name scenarios and traces use ("A100-SXM4-80GB", "V100M16")
  std::string device_name;   // nvidia-smi name ("NVIDIA A100-SXM4-80GB")
  std::int64_t vram_mb = 0;  // nvidia-smi memory.total where known, else nominal GB x 1024
  double fp16_tflops = 0;    // dense fp16 (tensor cores where present, no sparsity)
  bool assumed = false;      // figures are an assumption, not a datasheet's
};

// Every built-in model, sorted by name.
const std::vector<GpuModel>& gpu_model_table();
// A built-in model by its exact name; nullptr if none.
const GpuModel* find_gpu_model(std::string_view name);

// The built-in table with a scenario's overrides applied on top.
class GpuModelSet {
 public:
  GpuModelSet();
  // Replaces the figures of `name` (or adds it). vram_mb > 0, fp16_tflops >= 0.
  void set(const std::string& name, std::int64_t vram_mb, double fp16_tflops);
  const GpuModel* find(std::string_view name) const;
  const std::map<std::string, GpuModel, std::less<>>& all() const { return models_; }

 private:
  std::map<std::string, GpuModel, std::less<>> models_;
};

}  // namespace vramsim
