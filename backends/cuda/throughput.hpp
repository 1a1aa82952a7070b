#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace vramsim::gpu {

// 2 * n^3 floating-point operations per GEMM (one multiply, one add per term).
// Returns 0 when seconds <= 0 so a broken timer never yields a huge figure.
double matmul_tflops(std::int64_t n, std::int64_t iterations, double seconds);

// Dense (no sparsity) fp16 tensor-core peak with fp32 accumulation, from
// vendor datasheets. Matching is case-insensitive on whole tokens of the
// device name, all tokens of an entry must appear, first entry wins (so
// "H100 PCIe" precedes "H100", and "A10" does not match "A100").
struct PeakEntry {
  std::string_view tokens;  // space-separated tokens, e.g. "H100 PCIe"
  double dense_fp16_tflops;
};

std::span<const PeakEntry> peak_table();

// std::nullopt for unknown devices and for MIG slices (a slice has only part
// of the SMs, so the whole-GPU peak would overstate it).
std::optional<double> dense_fp16_peak_tflops(std::string_view device_name);

// 100 * measured / peak.
double percent_of_peak(double measured_tflops, double peak_tflops);

}  // namespace vramsim::gpu
