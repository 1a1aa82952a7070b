#pragma once
// The host memory a replica holds instead of device memory (no CUDA in the
// build, no visible device): at most kHostFallbackMaxMb, touched so it is
// resident. One implementation for both builds of device_memory.
#include <cstdint>
#include <string>

#include "tools/agent/device_memory.hpp"

namespace vramsim::agent {

// `why`: why no device memory is held, reported as HeldMemory::error.
HeldMemory hold_host_memory(std::int64_t gpu_memory_mb, std::string why);

}  // namespace vramsim::agent
