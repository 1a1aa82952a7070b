#include <cuda_runtime_api.h>

#include "backends/cuda/cuda_status.hpp"
#include "tools/agent/device_memory.hpp"
#include "tools/agent/host_memory.hpp"

namespace vramsim::agent {

HeldMemory hold_memory(std::int64_t gpu_memory_mb) {
  const auto count = gpu::detail::visible_device_count();
  if (!count) return hold_host_memory(gpu_memory_mb, count.error().message);
  HeldMemory h;
  h.memory = "device";
  if (cudaError_t e = cudaSetDevice(0); e != cudaSuccess) {
    h.error = gpu::detail::describe(e);
    return h;
  }
  const std::size_t bytes = static_cast<std::size_t>(gpu_memory_mb) << 20;
  if (bytes > 0) {
    void* p = nullptr;
    if (cudaError_t e = cudaMalloc(&p, bytes); e != cudaSuccess) {
      h.error = "cudaMalloc of " + std::to_string(gpu_memory_mb) + " MiB: " + gpu::detail::describe(e);
      return h;
    }
    // Cleared so every page is really backed, as a loaded model would be.
    if (cudaError_t e = cudaMemset(p, 0, bytes); e != cudaSuccess) {
      h.error = gpu::detail::describe(e);
      return h;
    }
    cudaDeviceSynchronize();
  }
  h.ok = true;
  h.bytes = static_cast<std::int64_t>(bytes);
  return h;
}

void release_device_contexts() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return;
  for (int i = 0; i < n; ++i) {
    if (cudaSetDevice(i) == cudaSuccess) cudaDeviceReset();
  }
}

}  // namespace vramsim::agent
