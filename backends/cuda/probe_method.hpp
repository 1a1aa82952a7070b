#pragma once

// The CPU side of the probe's measurement method, kept apart from CUDA so it
// is tested everywhere: which rows and columns of the timed GEMM's output are
// checked against a CPU fp32 dot product, how many GEMMs make one timed
// sample, the statistics over the samples, and the SM clock nvidia-smi reports.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cuda/error.hpp"
#include "backends/cuda/reference_gemm.hpp"

namespace vramsim::gpu {

// `count` distinct indices in [0, n), sorted: always the first and the last
// (where layout and edge-tile mistakes show), the rest spread by `seed`.
// All of [0, n) when count >= n.
std::vector<std::int64_t> sample_indices(std::int64_t n, int count, std::uint64_t seed);

// C(i, j) = sum over k of A(i, k) * B(k, j) for each sampled row i and
// column j, inputs from fill_value(seed, ...) widened to fp32 and summed in
// fp32 in k order, as reference_gemm_fp16 does. Row-major over the samples:
// element (ri, ci) at ri * cols.size() + ci.
std::vector<float> sampled_reference(std::int64_t n, std::uint64_t seed_a, std::uint64_t seed_b,
                                     std::span<const std::int64_t> rows, std::span<const std::int64_t> cols);

// check_tolerance over the sampled elements (same layout as
// sampled_reference); worst_row and worst_col are matrix indices.
ToleranceCheck check_sampled(std::span<const float> result, std::span<const float> reference, std::int64_t n,
                             std::span<const std::int64_t> rows, std::span<const std::int64_t> cols);

// Device bytes the timed run allocates: A, B and C (n x n fp16) plus the
// cuBLASLt workspace.
std::size_t timed_run_bytes(std::int64_t n, std::size_t workspace_bytes);

// OutOfMemory (exit status 6) when the timed run's bytes exceed the device's
// free bytes, naming both in MiB; nullopt when they fit.
std::optional<Error> check_fits(std::int64_t n, std::size_t workspace_bytes, std::size_t free_bytes);

// GEMMs per timed sample: enough to last at least min_sample_ms at the
// measured ms_per_gemm, and at least min_iterations; capped at 10^6.
int iterations_for(double ms_per_gemm, double min_sample_ms, int min_iterations);

struct SampleStats {
  int count = 0;
  double median = 0.0;
  double min = 0.0;
  double max = 0.0;
  double spread_pct = 0.0;  // 100 * (max - min) / median
};
// Statistics of the per-sample throughputs; all zero for no samples.
SampleStats summarize(std::vector<double> values);

// The SM clock in MHz from `nvidia-smi --query-gpu=clocks.sm
// --format=csv,noheader,nounits` (first line; "1980" or "1980 MHz");
// nullopt for "[N/A]", "[Not Supported]" or anything else.
std::optional<int> parse_sm_clock_mhz(std::string_view output);

// Asks nvidia-smi (found on PATH unless `program` has a '/') for the SM clock
// of the device with this PCI bus id; nullopt when it cannot tell.
std::optional<int> query_sm_clock_mhz(const std::string& pci_bus_id, const std::string& program = "nvidia-smi");

}  // namespace vramsim::gpu
