#include "backends/cuda/throughput.hpp"

namespace vramsim::gpu {

double matmul_tflops(std::int64_t n, std::int64_t iterations, double seconds) {
  if (!(seconds > 0.0) || n <= 0 || iterations <= 0) return 0.0;
  const double dn = static_cast<double>(n);
  return 2.0 * dn * dn * dn * static_cast<double>(iterations) / seconds / 1e12;
}

std::span<const GpuPeak> peak_table() { return gpu_peak_table(); }

std::optional<double> dense_fp16_peak_tflops(std::string_view device_name, Accumulate mode) {
  const GpuPeak* row = find_gpu_peak(device_name);
  if (row == nullptr || row->assumed) return std::nullopt;
  return row->tflops(mode);
}

double percent_of_peak(double measured_tflops, double peak_tflops) {
  if (!(peak_tflops > 0.0)) return 0.0;
  return 100.0 * measured_tflops / peak_tflops;
}

}  // namespace vramsim::gpu
