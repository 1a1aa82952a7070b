#pragma once

#include <cstdint>
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
  int iterations = 0;
};

// Keys in the reference system's order:
// gpu, gpu_total_mb, visible_devices, matmul_tflops, peak_alloc_mb, n, iterations.
// matmul_tflops is rounded to one decimal like the reference output.
nlohmann::ordered_json to_json(const ProbeReport& report);

// Reads a report back (e.g. from a probe's stdout). n and iterations are
// optional because the reference system omits them; they read as 0.
Expected<ProbeReport> report_from_json(const nlohmann::json& j);

// Round to one decimal place (half away from zero).
double round_tenth(double value);

}  // namespace vramsim::gpu
