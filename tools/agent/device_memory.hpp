#pragma once
// What a replica holds for its declared gpu_memory_mb: device memory on a
// CUDA build with a visible device (so the driver observes it), host memory
// otherwise (docs/live-protocol.md, "Replicas").
#include <cstdint>
#include <string>

namespace vramsim::agent {

// Host memory a replica holds when it cannot hold device memory.
inline constexpr std::int64_t kHostFallbackMaxMb = 64;

struct HeldMemory {
  bool ok = false;
  std::string memory;  // "device" or "host"
  std::string error;   // why not ok; for "host", why no device was used
  std::int64_t bytes = 0;
};

// Allocates and touches the memory; it stays held until the process exits.
HeldMemory hold_memory(std::int64_t gpu_memory_mb);

// Destroys the CUDA primary contexts detection created in this process, so
// the agent itself holds no device memory. No-op without CUDA.
void release_device_contexts();

}  // namespace vramsim::agent
