#include "backends/cuda/throughput.hpp"

#include <array>
#include <cctype>
#include <string>
#include <vector>

namespace vramsim::gpu {

double matmul_tflops(std::int64_t n, std::int64_t iterations, double seconds) {
  if (!(seconds > 0.0) || n <= 0 || iterations <= 0) return 0.0;
  const double dn = static_cast<double>(n);
  return 2.0 * dn * dn * dn * static_cast<double>(iterations) / seconds / 1e12;
}

namespace {

// Order matters: more specific entries first.
constexpr std::array kPeaks = {
    PeakEntry{"GB200", 2500.0},
    PeakEntry{"B200", 2250.0},
    PeakEntry{"B100", 1750.0},
    PeakEntry{"GH200", 989.4},
    PeakEntry{"H200 NVL", 835.5},
    PeakEntry{"H200", 989.4},
    PeakEntry{"H100 PCIe", 756.5},
    PeakEntry{"H100 NVL", 835.5},
    PeakEntry{"H100", 989.4},  // SXM5 ("NVIDIA H100 80GB HBM3")
    PeakEntry{"H800 PCIe", 756.5},
    PeakEntry{"H800", 989.4},
    PeakEntry{"A100", 312.0},
    PeakEntry{"A800", 312.0},
    PeakEntry{"A30", 165.0},
    PeakEntry{"A10", 125.0},
    PeakEntry{"A40", 149.7},
    PeakEntry{"RTX A6000", 154.8},
    PeakEntry{"L40S", 362.05},
    PeakEntry{"L40", 181.05},
    PeakEntry{"L4", 121.0},
    PeakEntry{"V100S", 130.0},
    PeakEntry{"V100 PCIE", 112.0},
    PeakEntry{"V100", 125.0},
    PeakEntry{"T4", 65.0},
    PeakEntry{"RTX 4090", 165.2},
    PeakEntry{"RTX 3090", 71.0},
};

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Device names split on anything that is not a letter or digit, so
// "A100-SXM4-40GB" yields A100, SXM4, 40GB.
std::vector<std::string> tokens_of(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

bool contains(const std::vector<std::string>& haystack, const std::string& token) {
  for (const auto& t : haystack) {
    if (t == token) return true;
  }
  return false;
}

}  // namespace

std::span<const PeakEntry> peak_table() { return kPeaks; }

std::optional<double> dense_fp16_peak_tflops(std::string_view device_name) {
  const auto name_tokens = tokens_of(device_name);
  if (contains(name_tokens, "MIG")) return std::nullopt;
  for (const auto& entry : kPeaks) {
    const auto wanted = tokens_of(upper(entry.tokens));
    bool all = !wanted.empty();
    for (const auto& w : wanted) all = all && contains(name_tokens, w);
    if (all) return entry.dense_fp16_tflops;
  }
  return std::nullopt;
}

double percent_of_peak(double measured_tflops, double peak_tflops) {
  if (!(peak_tflops > 0.0)) return 0.0;
  return 100.0 * measured_tflops / peak_tflops;
}

}  // namespace vramsim::gpu
