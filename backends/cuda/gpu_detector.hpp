#pragma once

// GPU inventory detection for sizing a node's VRAM. The CUDA runtime is used
// where vramsim is built with CUDA; nvidia-smi otherwise.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "backends/cuda/error.hpp"
#include "backends/cuda/gpu_inventory.hpp"

namespace vramsim::gpu {

class GpuDetector {
 public:
  virtual ~GpuDetector() = default;
  // An empty inventory means detection worked and found no device. Errors:
  // NoDevice when no driver/tool/device is usable, DetectionFailed when the
  // source answered with something unusable, CudaFailure for CUDA errors.
  virtual Expected<GpuInventory> detect() const = 0;
  virtual std::string_view name() const = 0;
};

class NvidiaSmiDetector final : public GpuDetector {
 public:
  // A program without '/' is looked up on PATH when detect() runs.
  explicit NvidiaSmiDetector(std::string program = "nvidia-smi");
  Expected<GpuInventory> detect() const override;
  std::string_view name() const override { return "nvidia-smi"; }

 private:
  std::string program_;
};

// Resolves a program the way a shell would (PATH search unless it contains
// '/'); only executable regular files count.
std::optional<std::string> find_executable(std::string_view program);

// True when this build includes the CUDA runtime detector and the probe.
bool cuda_built_in();

// CudaRuntimeDetector when built with CUDA, NvidiaSmiDetector otherwise.
std::unique_ptr<GpuDetector> make_default_detector();

}  // namespace vramsim::gpu
