#include "backends/cuda/probe_method.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "backends/cuda/fp16.hpp"
#include "backends/cuda/gpu_detector.hpp"
#include "engine/random.hpp"

namespace vramsim::gpu {

std::vector<std::int64_t> sample_indices(std::int64_t n, int count, std::uint64_t seed) {
  std::vector<std::int64_t> out;
  if (n < 1 || count < 1) return out;
  if (count >= n) {
    for (std::int64_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  std::set<std::int64_t> picked{0};
  if (count >= 2) picked.insert(n - 1);
  std::uint64_t state = seed;
  while (static_cast<int>(picked.size()) < count) {
    state = splitmix64(state);
    picked.insert(static_cast<std::int64_t>(state % static_cast<std::uint64_t>(n)));
  }
  return {picked.begin(), picked.end()};
}

std::vector<float> sampled_reference(std::int64_t n, std::uint64_t seed_a, std::uint64_t seed_b,
                                     std::span<const std::int64_t> rows, std::span<const std::int64_t> cols) {
  std::vector<float> out(rows.size() * cols.size(), 0.0f);
  if (n < 1) return out;
  const auto un = static_cast<std::uint64_t>(n);
  // Column-major: A(i, k) at i + k * n, B(k, j) at k + j * n.
  std::vector<float> a_row(un), b_col(un);
  std::vector<std::vector<float>> b_cols;
  for (std::int64_t j : cols) {
    for (std::uint64_t k = 0; k < un; ++k) b_col[k] = half_to_float(fill_value(seed_b, k + static_cast<std::uint64_t>(j) * un));
    b_cols.push_back(b_col);
  }
  for (std::size_t ri = 0; ri < rows.size(); ++ri) {
    const auto i = static_cast<std::uint64_t>(rows[ri]);
    for (std::uint64_t k = 0; k < un; ++k) a_row[k] = half_to_float(fill_value(seed_a, i + k * un));
    for (std::size_t ci = 0; ci < cols.size(); ++ci) {
      float sum = 0.0f;
      for (std::uint64_t k = 0; k < un; ++k) sum += a_row[k] * b_cols[ci][k];
      out[ri * cols.size() + ci] = sum;
    }
  }
  return out;
}

ToleranceCheck check_sampled(std::span<const float> result, std::span<const float> reference, std::int64_t n,
                             std::span<const std::int64_t> rows, std::span<const std::int64_t> cols) {
  ToleranceCheck out;
  char line[256];
  const std::size_t expected = rows.size() * cols.size();
  if (expected == 0 || result.size() != expected || reference.size() != expected) {
    std::snprintf(line, sizeof line, "size mismatch: %zu x %zu samples, result %zu, reference %zu elements",
                  rows.size(), cols.size(), result.size(), reference.size());
    out.message = line;
    return out;
  }
  double sum_sq = 0.0;
  for (float r : reference) sum_sq += static_cast<double>(r) * r;
  const double rms = std::sqrt(sum_sq / static_cast<double>(reference.size()));
  for (std::size_t idx = 0; idx < expected; ++idx) {
    const double c = result[idx];
    const double r = reference[idx];
    double scaled = std::numeric_limits<double>::infinity();
    if (std::isfinite(c) && std::isfinite(r)) {
      const double diff = std::fabs(c - r);
      const double denom = std::fabs(r) + rms;
      scaled = denom > 0.0 ? diff / denom : (diff == 0.0 ? 0.0 : scaled);
    }
    if (!(scaled <= kRelativeTolerance)) ++out.mismatches;
    if (out.worst_row < 0 || !(scaled <= out.max_scaled_error)) {
      out.max_scaled_error = scaled;
      out.worst_row = rows[idx / cols.size()];
      out.worst_col = cols[idx % cols.size()];
      out.worst_result = c;
      out.worst_reference = r;
    }
  }
  out.ok = out.mismatches == 0;
  std::snprintf(line, sizeof line,
                "%s: timed n=%lld output, %lld of %zu sampled elements over tolerance %.3g; worst (%lld,%lld) "
                "device %.6g vs reference %.6g, scaled error %.3g",
                out.ok ? "correctness check passed" : "correctness check failed", static_cast<long long>(n),
                static_cast<long long>(out.mismatches), expected, kRelativeTolerance,
                static_cast<long long>(out.worst_row), static_cast<long long>(out.worst_col), out.worst_result,
                out.worst_reference, out.max_scaled_error);
  out.message = line;
  return out;
}

std::size_t timed_run_bytes(std::int64_t n, std::size_t workspace_bytes) {
  const auto un = static_cast<std::size_t>(n < 0 ? 0 : n);
  return 3 * un * un * sizeof(std::uint16_t) + workspace_bytes;
}

std::optional<Error> check_fits(std::int64_t n, std::size_t workspace_bytes, std::size_t free_bytes) {
  const std::size_t needed = timed_run_bytes(n, workspace_bytes);
  if (needed <= free_bytes) return std::nullopt;
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  return Error{ErrorKind::OutOfMemory, "out of device memory: n=" + std::to_string(n) + " needs " +
                                           std::to_string((needed + kMiB - 1) / kMiB) + " MiB, " +
                                           std::to_string(free_bytes / kMiB) + " MiB free"};
}

int iterations_for(double ms_per_gemm, double min_sample_ms, int min_iterations) {
  constexpr double kMaxIterations = 1e6;
  double want = min_iterations < 1 ? 1.0 : static_cast<double>(min_iterations);
  if (ms_per_gemm > 0.0 && std::isfinite(ms_per_gemm) && min_sample_ms > 0.0)
    want = std::max(want, std::ceil(min_sample_ms / ms_per_gemm));
  return static_cast<int>(std::min(want, kMaxIterations));
}

SampleStats summarize(std::vector<double> values) {
  SampleStats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const std::size_t m = values.size();
  s.count = static_cast<int>(m);
  s.median = m % 2 ? values[m / 2] : (values[m / 2 - 1] + values[m / 2]) / 2.0;
  s.min = values.front();
  s.max = values.back();
  s.spread_pct = s.median > 0.0 ? 100.0 * (s.max - s.min) / s.median : 0.0;
  return s;
}

std::optional<int> parse_sm_clock_mhz(std::string_view output) {
  const auto eol = output.find('\n');
  std::string_view line = output.substr(0, eol);
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
  if (line.size() > 4 && line.substr(line.size() - 4) == " MHz") line.remove_suffix(4);
  if (line.empty() || line.size() > 6) return std::nullopt;
  int mhz = 0;
  for (char c : line) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    mhz = mhz * 10 + (c - '0');
  }
  return mhz > 0 ? std::optional<int>(mhz) : std::nullopt;
}

std::optional<int> query_sm_clock_mhz(const std::string& pci_bus_id, const std::string& program) {
  const auto exe = find_executable(program);
  if (!exe) return std::nullopt;
  // Only [0-9A-Fa-f:.] reach the shell: the bus id comes from the driver,
  // but it is checked rather than trusted.
  for (char c : pci_bus_id)
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return std::nullopt;
  if (pci_bus_id.empty() || exe->find('\'') != std::string::npos) return std::nullopt;
  const std::string command = "'" + *exe + "' --query-gpu=clocks.sm --format=csv,noheader,nounits --id=" +
                              pci_bus_id + " 2>/dev/null";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string output;
  char buf[256];
  std::size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof buf, pipe)) > 0)
    if (output.size() < 4096) output.append(buf, got);
  const int status = ::pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return parse_sm_clock_mhz(output);
}

}  // namespace vramsim::gpu
