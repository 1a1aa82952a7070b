#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/cuda/error.hpp"

namespace vramsim::gpu {

// One probe result. "MB" means MiB (2^20 bytes), as nvidia-smi reports it.
struct ProbeReport {
  std::string gpu;              // device name from the CUDA runtime
  std::int64_t gpu_total_mb = 0;  // total device memory
  std::string visible_devices;  // CUDA_VISIBLE_DEVICES as set ("" when unset)
  double matmul_tflops = 0.0;   // measured fp16 GEMM throughput
  std::int64_t peak_alloc_mb = 0;  // device bytes this probe held at once, rounded up
  std::int64_t n = 0;
  int iterations = 0;             // GEMMs per timed sample
  // The method: matmul_tflops is the median over `samples` timed samples.
  int samples = 0;
  double tflops_min = 0.0, tflops_max = 0.0;
  double spread_pct = 0.0;        // 100 * (max - min) / median
  double sample_ms = 0.0;         // median duration of one sample
  double warmup_ms = 0.0;         // untimed GEMM time before the samples
  std::optional<int> sm_clock_mhz;  // median SM clock during the samples (nvidia-smi)
  std::int64_t checked_elements = 0;  // elements of the timed output checked on the CPU
};

// Keys in the reference system's order:
// gpu, gpu_total_mb, visible_devices, matmul_tflops, peak_alloc_mb, n, iterations,
// then the method's: samples, tflops_min, tflops_max, spread_pct, sample_ms,
// warmup_ms, sm_clock_mhz (null when unknown), checked_elements.
// TFLOPS, percentages and milliseconds are rounded to one decimal like the
// reference output.
nlohmann::ordered_json to_json(const ProbeReport& report);

// Reads a report back (e.g. from a probe's stdout). n, iterations and the
// method's keys are optional because the reference system omits them; they
// read as 0 (sm_clock_mhz as unknown).
Expected<ProbeReport> report_from_json(const nlohmann::json& j);

// Round to one decimal place (half away from zero).
double round_tenth(double value);

}  // namespace vramsim::gpu
