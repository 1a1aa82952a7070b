#pragma once

// IEEE 754 binary16 conversions on the host, so the CPU-side code needs no
// CUDA headers. Values are carried as their 16-bit patterns.

#include <cstdint>

namespace vramsim::gpu {

// Round-to-nearest-even, like __float2half_rn; overflow gives infinity.
std::uint16_t float_to_half(float value);
float half_to_float(std::uint16_t bits);

}  // namespace vramsim::gpu
