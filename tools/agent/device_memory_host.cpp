#include <algorithm>
#include <cstring>
#include <memory>

#include "tools/agent/device_memory.hpp"

namespace vramsim::agent {

HeldMemory hold_memory(std::int64_t gpu_memory_mb) {
  HeldMemory h;
  h.memory = "host";
  h.error = "vramsim was built without CUDA support";
  h.bytes = std::min(gpu_memory_mb, kHostFallbackMaxMb) * (std::int64_t{1} << 20);
  static std::unique_ptr<char[]> held;
  held.reset(new char[static_cast<std::size_t>(std::max<std::int64_t>(h.bytes, 1))]);
  std::memset(held.get(), 1, static_cast<std::size_t>(h.bytes));  // touched, so resident
  h.ok = true;
  return h;
}

void release_device_contexts() {}

}  // namespace vramsim::agent
