#include "backends/cuda/fp16.hpp"

#include <cmath>
#include <cstring>

namespace vramsim::gpu {

std::uint16_t float_to_half(float value) {
  std::uint32_t x = 0;
  std::memcpy(&x, &value, sizeof x);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t exp = (x >> 23) & 0xffu;
  std::uint32_t mant = x & 0x7fffffu;

  if (exp == 0xffu) {  // inf stays inf; NaN stays a quiet NaN
    return static_cast<std::uint16_t>(sign | 0x7c00u | (mant != 0 ? 0x200u | (mant >> 13) : 0u));
  }
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);  // below half the smallest subnormal
    mant |= 0x800000u;
    const int shift = 14 - e;
    std::uint32_t half_mant = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u) != 0)) ++half_mant;
    return static_cast<std::uint16_t>(sign | half_mant);  // a carry lands in the exponent
  }
  std::uint32_t half = sign | (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u) != 0)) ++half;  // may carry to inf: correct
  return static_cast<std::uint16_t>(half);
}

float half_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1fu;
  const std::uint32_t mant = bits & 0x3ffu;
  std::uint32_t x = 0;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      const float magnitude = std::ldexp(static_cast<float>(mant), -24);
      return sign != 0 ? -magnitude : magnitude;
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  float out = 0.0f;
  std::memcpy(&out, &x, sizeof out);
  return out;
}

}  // namespace vramsim::gpu
