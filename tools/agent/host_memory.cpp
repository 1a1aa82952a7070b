#include "tools/agent/host_memory.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

namespace vramsim::agent {

HeldMemory hold_host_memory(std::int64_t gpu_memory_mb, std::string why) {
  HeldMemory h;
  h.memory = "host";
  h.error = std::move(why);
  h.bytes = std::min(gpu_memory_mb, kHostFallbackMaxMb) * (std::int64_t{1} << 20);
  static std::unique_ptr<char[]> held;
  held.reset(new char[static_cast<std::size_t>(std::max<std::int64_t>(h.bytes, 1))]);
  std::memset(held.get(), 1, static_cast<std::size_t>(h.bytes));  // touched, so resident
  h.ok = true;
  return h;
}

}  // namespace vramsim::agent
