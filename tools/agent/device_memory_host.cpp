#include "tools/agent/device_memory.hpp"
#include "tools/agent/host_memory.hpp"

namespace vramsim::agent {

HeldMemory hold_memory(std::int64_t gpu_memory_mb) {
  return hold_host_memory(gpu_memory_mb, "vramsim was built without CUDA support");
}

void release_device_contexts() {}

}  // namespace vramsim::agent
