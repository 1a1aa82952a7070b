#include "backends/cuda/probe_report.hpp"

#include <cmath>

#include "backends/cuda/json_line.hpp"

namespace vramsim::gpu {

double round_tenth(double value) { return std::round(value * 10.0) / 10.0; }

std::string report_json(const ProbeReport& report) {
  JsonLine j;
  j.str("gpu", report.gpu)
      .integer("gpu_total_mb", report.gpu_total_mb)
      .str("visible_devices", report.visible_devices)
      .num("matmul_tflops", round_tenth(report.matmul_tflops))
      .integer("peak_alloc_mb", report.peak_alloc_mb)
      .integer("n", report.n)
      .integer("iterations", report.iterations)
      .integer("samples", report.samples)
      .num("tflops_min", round_tenth(report.tflops_min))
      .num("tflops_max", round_tenth(report.tflops_max))
      .num("spread_pct", round_tenth(report.spread_pct))
      .num("sample_ms", round_tenth(report.sample_ms))
      .num("warmup_ms", round_tenth(report.warmup_ms));
  if (report.sm_clock_mhz) {
    j.integer("sm_clock_mhz", *report.sm_clock_mhz);
  } else {
    j.null("sm_clock_mhz");
  }
  j.integer("checked_elements", report.checked_elements).str("sm_clock_source", report.sm_clock_source);
  return j.done();
}

}  // namespace vramsim::gpu
