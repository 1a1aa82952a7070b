#pragma once

#include <cstdint>
#include <optional>

#include "backends/cuda/error.hpp"

namespace vramsim::gpu {

struct ProbeOptions {
  std::int64_t n = 8192;      // timed GEMM size: C(n x n) = A(n x n) * B(n x n)
  int iterations = 10;        // at least this many GEMMs per timed sample
  int warmup = 3;             // at least this many untimed GEMMs before timing
  std::int64_t check_n = 256; // size of the separate correctness run against the CPU
  int samples = 5;            // timed samples; the report gives their median and spread
  double sample_ms = 200;     // each sample runs at least this long
  double warmup_ms = 2000;    // untimed GEMMs for at least this long, so clocks ramp up
  int check_samples = 16;     // rows and columns of the timed output checked against the CPU
};

// Upper bounds keep byte counts and FLOP counts far from overflow and the
// O(n^3) CPU reference short; the device's memory is the real limit on n.
inline constexpr std::int64_t kMaxN = std::int64_t{1} << 20;
inline constexpr std::int64_t kMaxCheckN = 2048;
inline constexpr int kMaxSamples = 1000;
inline constexpr double kMaxSampleMs = 60'000;
inline constexpr double kMaxWarmupMs = 600'000;
inline constexpr int kMaxCheckSamples = 1024;

// Returns an InvalidArgument error describing the first bad field.
std::optional<Error> validate(const ProbeOptions& options);

}  // namespace vramsim::gpu
