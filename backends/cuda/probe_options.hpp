#pragma once

#include <cstdint>
#include <optional>

#include "backends/cuda/error.hpp"

namespace vramsim::gpu {

struct ProbeOptions {
  std::int64_t n = 8192;      // timed GEMM size: C(n x n) = A(n x n) * B(n x n)
  int iterations = 10;        // timed iterations
  int warmup = 3;             // untimed iterations before timing
  std::int64_t check_n = 256; // size of the correctness run against the CPU
};

// Upper bounds keep byte counts and FLOP counts far from overflow and the
// O(n^3) CPU reference short; the device's memory is the real limit on n.
inline constexpr std::int64_t kMaxN = std::int64_t{1} << 20;
inline constexpr std::int64_t kMaxCheckN = 2048;

// Returns an InvalidArgument error describing the first bad field.
std::optional<Error> validate(const ProbeOptions& options);

}  // namespace vramsim::gpu
