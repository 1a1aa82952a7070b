#pragma once

// CUDA-only helpers shared by the runtime detector and the matmul probe.
// Include only from sources built with CUDA.

#include <cuda_runtime_api.h>

#include <string>

#include "backends/cuda/error.hpp"

namespace vramsim::gpu::detail {

// "cudaErrorX: description".
std::string describe(cudaError_t status);

// Number of devices the runtime can use; NoDevice (with the runtime's
// reason) when there are none or the driver is missing.
Expected<int> visible_device_count();

}  // namespace vramsim::gpu::detail
