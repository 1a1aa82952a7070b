#pragma once

#include "backends/cuda/gpu_detector.hpp"

namespace vramsim::gpu {

// Counts devices with cudaGetDeviceCount, reads name and total memory from
// cudaDeviceProp and free memory from cudaMemGetInfo (which creates the
// primary context on each device). The runtime has no MIG-mode query, so
// mig_enabled is true for MIG instances (their names carry "MIG") and
// unknown otherwise. Only defined when cuda_built_in() is true.
class CudaRuntimeDetector final : public GpuDetector {
 public:
  Expected<GpuInventory> detect() const override;
  std::string_view name() const override { return "cuda-runtime"; }
};

}  // namespace vramsim::gpu
