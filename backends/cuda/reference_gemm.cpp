#include "backends/cuda/reference_gemm.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "backends/cuda/fp16.hpp"
#include "engine/random.hpp"

namespace vramsim::gpu {

std::uint16_t fill_value(std::uint64_t seed, std::uint64_t index) {
  const auto k = static_cast<std::int64_t>(splitmix64(seed * 0x100000001b3ull ^ splitmix64(index)) % 2049) - 1024;
  return float_to_half(static_cast<float>(k) / 1024.0f);
}

void fill_fp16(std::span<std::uint16_t> out, std::uint64_t seed, std::uint64_t offset) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = fill_value(seed, offset + i);
}

std::vector<float> reference_gemm_fp16(std::int64_t n, std::span<const std::uint16_t> a,
                                       std::span<const std::uint16_t> b) {
  const auto un = static_cast<std::size_t>(n);
  if (n < 1 || a.size() != un * un || b.size() != un * un) return {};
  std::vector<float> af(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) af[i] = half_to_float(a[i]);
  std::vector<float> c(un * un, 0.0f);
  // j-k-i order: each c(i, j) still sums its k terms in ascending k.
  for (std::size_t j = 0; j < un; ++j) {
    float* cj = &c[j * un];
    for (std::size_t k = 0; k < un; ++k) {
      const float bkj = half_to_float(b[k + j * un]);
      const float* ak = &af[k * un];
      for (std::size_t i = 0; i < un; ++i) cj[i] += ak[i] * bkj;
    }
  }
  return c;
}

ToleranceCheck check_tolerance(std::span<const float> result, std::span<const float> reference,
                               std::int64_t n) {
  ToleranceCheck out;
  char line[256];
  const auto un = static_cast<std::size_t>(n < 0 ? 0 : n);
  if (n < 1 || result.size() != un * un || reference.size() != un * un) {
    std::snprintf(line, sizeof line, "size mismatch: n=%lld, result %zu, reference %zu elements",
                  static_cast<long long>(n), result.size(), reference.size());
    out.message = line;
    return out;
  }
  double sum_sq = 0.0;
  for (float r : reference) sum_sq += static_cast<double>(r) * r;
  const double rms = std::sqrt(sum_sq / static_cast<double>(reference.size()));

  for (std::size_t idx = 0; idx < result.size(); ++idx) {
    const double c = result[idx];
    const double r = reference[idx];
    double scaled = 0.0;
    if (!std::isfinite(c) || !std::isfinite(r)) {
      scaled = std::numeric_limits<double>::infinity();
    } else {
      const double diff = std::fabs(c - r);
      const double denom = std::fabs(r) + rms;
      scaled = denom > 0.0 ? diff / denom : (diff == 0.0 ? 0.0 : std::numeric_limits<double>::infinity());
    }
    if (!(scaled <= kRelativeTolerance)) ++out.mismatches;
    if (out.worst_row < 0 || !(scaled <= out.max_scaled_error)) {
      out.max_scaled_error = scaled;
      out.worst_row = static_cast<std::int64_t>(idx % un);
      out.worst_col = static_cast<std::int64_t>(idx / un);
      out.worst_result = c;
      out.worst_reference = r;
    }
  }
  out.ok = out.mismatches == 0;
  std::snprintf(line, sizeof line,
                "%s: n=%lld, %lld of %zu elements over tolerance %.3g; worst (%lld,%lld) "
                "device %.6g vs reference %.6g, scaled error %.3g",
                out.ok ? "correctness check passed" : "correctness check failed",
                static_cast<long long>(n), static_cast<long long>(out.mismatches), result.size(),
                kRelativeTolerance, static_cast<long long>(out.worst_row),
                static_cast<long long>(out.worst_col), out.worst_result, out.worst_reference,
                out.max_scaled_error);
  out.message = line;
  return out;
}

}  // namespace vramsim::gpu
