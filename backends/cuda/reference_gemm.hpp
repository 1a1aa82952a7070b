#pragma once

// CPU side of the correctness check: deterministic fp16 inputs, an fp16 GEMM
// with fp32 accumulation, and the tolerance the device result must meet.
// Matrices are n x n, column-major (cuBLAS's layout): element (i, j) is at
// i + j * n.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace vramsim::gpu {

// Deterministic input element: k / 1024 with k in [-1024, 1024], exact in
// fp16, so host and device start from identical values.
std::uint16_t fill_value(std::uint64_t seed, std::uint64_t index);

// out[i] = fill_value(seed, offset + i); lets large matrices be filled in chunks.
void fill_fp16(std::span<std::uint16_t> out, std::uint64_t seed, std::uint64_t offset = 0);

// C = A * B with inputs widened to fp32 and fp32 accumulation in k order.
// The result is left in fp32 (not rounded to fp16).
std::vector<float> reference_gemm_fp16(std::int64_t n, std::span<const std::uint16_t> a,
                                       std::span<const std::uint16_t> b);

// An element passes when |c - r| <= kRelativeTolerance * (|r| + rms(r)), with
// c the device value (fp16 output widened to fp32) and r the CPU reference.
// 2^-8 is eight fp16 unit roundoffs (2^-11): the fp16 rounding of the output
// costs at most one, and the rest covers the different fp32 accumulation order
// (and tensor-core truncation) of the device. The rms(r) term keeps elements
// whose exact value is near zero from demanding more than fp32 accumulation
// can give. Layout, transpose or dtype mistakes produce errors of order 1.
inline constexpr double kRelativeTolerance = 1.0 / 256.0;

struct ToleranceCheck {
  bool ok = false;
  std::int64_t mismatches = 0;     // elements over the tolerance (or not finite)
  double max_scaled_error = 0.0;   // max |c - r| / (|r| + rms(r))
  std::int64_t worst_row = -1;
  std::int64_t worst_col = -1;
  double worst_result = 0.0;
  double worst_reference = 0.0;
  std::string message;             // one line, for logs and errors
};

ToleranceCheck check_tolerance(std::span<const float> result, std::span<const float> reference,
                               std::int64_t n);

}  // namespace vramsim::gpu
