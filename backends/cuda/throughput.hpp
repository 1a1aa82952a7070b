#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "models/gpu_models.hpp"

namespace vramsim::gpu {

// 2 * n^3 floating-point operations per GEMM (one multiply, one add per term).
// Returns 0 when seconds <= 0 so a broken timer never yields a huge figure.
double matmul_tflops(std::int64_t n, std::int64_t iterations, double seconds);

// The peak rows of the one GPU table (models/gpu_models.hpp).
std::span<const GpuPeak> peak_table();

// The dense fp16 tensor-core peak of a device for one accumulate mode (the
// probe's is fp32), from the GPU table's datasheet rows. std::nullopt for
// unknown devices, MIG slices, rows whose figure is only assumed (a share of
// an assumption is no measure of the hardware), and modes the row lacks.
std::optional<double> dense_fp16_peak_tflops(std::string_view device_name, Accumulate mode = Accumulate::Fp32);

// 100 * measured / peak.
double percent_of_peak(double measured_tflops, double peak_tflops);

}  // namespace vramsim::gpu
