#include "models/gpu_models.hpp"

#include <algorithm>
#include <stdexcept>

namespace vramsim {

namespace {

// Figures and their sources: docs/gpu-models.md. Trace aliases (V100M16,
// V100, ...) repeat the datasheet model they stand for, so a trace's node
// list resolves without a renaming step.
std::vector<GpuModel> build_table() {
  std::vector<GpuModel> t = {
      {"A10", "NVIDIA A10", 23028, 125.0, false},
      {"A10G", "NVIDIA A10G", 23028, 70.0, true},  // no datasheet: docs/gpu-models.md
      {"A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB", 40960, 312.0, false},
      {"A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", 81920, 312.0, false},
      {"A800-SXM4-80GB", "NVIDIA A800-SXM4-80GB", 81920, 312.0, false},
      {"H100-PCIE-80GB", "NVIDIA H100 PCIe", 81559, 756.5, false},
      {"H100-SXM5-80GB", "NVIDIA H100 80GB HBM3", 81559, 989.4, false},
      {"H200", "NVIDIA H200", 143771, 989.4, false},
      {"H800", "NVIDIA H800", 81559, 989.4, false},
      {"L4", "NVIDIA L4", 23034, 121.0, false},
      {"L40S", "NVIDIA L40S", 46068, 362.05, false},
      {"P100", "Tesla P100-PCIE-16GB", 16280, 18.7, false},
      {"RTX3090", "NVIDIA GeForce RTX 3090", 24576, 71.0, false},
      {"T4", "Tesla T4", 15360, 65.0, false},
      {"V100", "Tesla V100-SXM2-16GB", 16384, 125.0, false},
      {"V100-SXM2-16GB", "Tesla V100-SXM2-16GB", 16384, 125.0, false},
      {"V100-SXM2-32GB", "Tesla V100-SXM2-32GB", 32768, 125.0, false},
      {"V100M16", "Tesla V100-SXM2-16GB", 16384, 125.0, false},
      {"V100M32", "Tesla V100-SXM2-32GB", 32768, 125.0, false},
      // openb's undisclosed models: guesses from the host shapes in the node
      // list (docs/gpu-models.md); a scenario may override them.
      {"G1", "G1", 16384, 125.0, true},
      {"G2", "G2", 16384, 125.0, true},
      {"G3", "G3", 40960, 312.0, true},
  };
  std::sort(t.begin(), t.end(), [](const GpuModel& a, const GpuModel& b) { return a.name < b.name; });
  return t;
}

}  // namespace

const std::vector<GpuModel>& gpu_model_table() {
  static const std::vector<GpuModel> t = build_table();
  return t;
}

const GpuModel* find_gpu_model(std::string_view name) {
  const auto& t = gpu_model_table();
  auto it = std::lower_bound(t.begin(), t.end(), name, [](const GpuModel& m, std::string_view n) { return m.name < n; });
  return it != t.end() && it->name == name ? &*it : nullptr;
}

GpuModelSet::GpuModelSet() {
  for (const auto& m : gpu_model_table()) models_.emplace(m.name, m);
}

void GpuModelSet::set(const std::string& name, std::int64_t vram_mb, double fp16_tflops) {
  if (vram_mb <= 0 || !(fp16_tflops >= 0)) throw std::invalid_argument("GpuModelSet::set: figures out of range");
  auto [it, added] = models_.try_emplace(name, GpuModel{name, name, vram_mb, fp16_tflops, false});
  if (!added) {
    it->second.vram_mb = vram_mb;
    it->second.fp16_tflops = fp16_tflops;
    it->second.assumed = false;
  }
}

const GpuModel* GpuModelSet::find(std::string_view name) const {
  auto it = models_.find(name);
  return it == models_.end() ? nullptr : &it->second;
}

}  // namespace vramsim
