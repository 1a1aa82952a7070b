#include "backends/cuda/cuda_runtime_detector.hpp"

#include <dlfcn.h>

#include <cuda_runtime_api.h>

#include <vector>

#include "backends/cuda/cuda_status.hpp"

namespace vramsim::gpu {

namespace detail {

std::string describe(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

namespace {

// The runtime reports a missing driver as "driver version is insufficient";
// name the real cause when libcuda cannot be loaded at all.
bool driver_library_loadable() {
  void* handle = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return false;
  ::dlclose(handle);
  return true;
}

Error count_failure(cudaError_t status) {
  (void)cudaGetLastError();  // clear it so later calls are not poisoned
  std::string reason = "cudaGetDeviceCount: " + describe(status);
  if (status == cudaErrorInsufficientDriver && !driver_library_loadable()) {
    reason = "no NVIDIA driver (libcuda.so.1 cannot be loaded); " + reason;
  }
  return no_device_error(reason);
}

}  // namespace

Expected<int> visible_device_count() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) return count_failure(status);
  if (count <= 0) return no_device_error("cudaGetDeviceCount returned 0 devices");
  return count;
}

}  // namespace detail

Expected<GpuInventory> CudaRuntimeDetector::detect() const {
  GpuInventory inventory;
  inventory.source = "cuda-runtime";
  int count = 0;
  const cudaError_t count_status = cudaGetDeviceCount(&count);
  if (count_status == cudaErrorNoDevice) {
    (void)cudaGetLastError();
    return inventory;  // the runtime works and sees no device
  }
  if (count_status != cudaSuccess) {
    return detail::count_failure(count_status);  // same reason text as the probe
  }
  int original = -1;
  const bool have_original = cudaGetDevice(&original) == cudaSuccess;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    const cudaError_t status = cudaGetDeviceProperties(&prop, i);
    if (status != cudaSuccess) {
      return Error{ErrorKind::CudaFailure,
                   "cudaGetDeviceProperties(" + std::to_string(i) + "): " + detail::describe(status)};
    }
    GpuInfo info;
    info.index = i;
    info.name = prop.name;
    info.total_mb = static_cast<std::int64_t>(prop.totalGlobalMem >> 20);
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      info.free_mb = static_cast<std::int64_t>(free_bytes >> 20);
    } else {
      (void)cudaGetLastError();  // free memory stays unknown
    }
    if (info.name.find("MIG") != std::string::npos) info.mig_enabled = true;
    inventory.devices.push_back(std::move(info));
  }
  if (have_original) (void)cudaSetDevice(original);
  return inventory;
}

}  // namespace vramsim::gpu
