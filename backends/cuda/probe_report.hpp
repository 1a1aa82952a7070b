#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "backends/cuda/error.hpp"

namespace vramsim::gpu {

// One probe result. "MB" means MiB (2^20 bytes), as nvidia-smi reports it.
struct ProbeReport {
  std::string gpu;              // device name from the CUDA runtime
  std::int64_t gpu_total_mb = 0;  // total device memory
  std::string visible_devices;  // CUDA_VISIBLE_DEVICES as set ("" when unset)
  double matmul_tflops = 0.0;   // measured fp16 GEMM throughput
  // Device bytes this probe's own cudaMalloc calls held at once (matrices and
  // cuBLASLt workspace), rounded up; not the CUDA context, not cuBLASLt's
  // internal memory (docs/probe.md).
  std::int64_t peak_alloc_mb = 0;
  std::int64_t n = 0;
  int iterations = 0;             // GEMMs per timed sample
  // The method: matmul_tflops is the median over `samples` timed samples.
  int samples = 0;
  double tflops_min = 0.0, tflops_max = 0.0;
  double spread_pct = 0.0;        // 100 * (max - min) / median
  double sample_ms = 0.0;         // median duration of one sample
  double warmup_ms = 0.0;         // untimed GEMM time before the samples
  std::optional<int> sm_clock_mhz;  // median SM clock read inside the samples
  std::int64_t checked_elements = 0;  // elements of the timed output checked on the CPU
  std::string sm_clock_source;    // "nvml", "nvidia-smi" or "" (no reading inside a sample)
};

// One line of JSON, keys in the reference system's order:
// gpu, gpu_total_mb, visible_devices, matmul_tflops, peak_alloc_mb, n, iterations,
// then the method's: samples, tflops_min, tflops_max, spread_pct, sample_ms,
// warmup_ms, sm_clock_mhz (null when unknown), checked_elements,
// sm_clock_source. TFLOPS, percentages and milliseconds are rounded to one
// decimal like the reference output.
std::string report_json(const ProbeReport& report);

// Round to one decimal place (half away from zero).
double round_tenth(double value);

}  // namespace vramsim::gpu

// The nlohmann::json views, for the project's callers (the agent). The
// probe's standalone build (VRAMSIM_PROBE_STANDALONE) has no JSON library.
#ifndef VRAMSIM_PROBE_STANDALONE
#include <nlohmann/json.hpp>

namespace vramsim::gpu {

// report_json's line as a JSON value (same keys, same order, same numbers).
nlohmann::ordered_json to_json(const ProbeReport& report);

// Reads a report back (e.g. from a probe's stdout). n, iterations and the
// method's keys are optional because the reference system omits them; they
// read as 0 (sm_clock_mhz as unknown).
Expected<ProbeReport> report_from_json(const nlohmann::json& j);

}  // namespace vramsim::gpu
#endif
