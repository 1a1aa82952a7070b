#include "models/sharing_curves.hpp"

#include <algorithm>
#include <cstdio>

namespace vramsim {

namespace {

constexpr const char* kColocation =
    "../shared/data/gpu-colocation/colocation-h200.csv: k replica processes on one NVIDIA H200, "
    "PyTorch 2.11 / CUDA 13, aggregate throughput over one process alone";
constexpr const char* kThreads =
    "../shared/data/gpu-colocation/replica-threads-h200.csv: one replica process serving k requests "
    "from k threads, ResNet-50 224x224 batch 1 fp16 on an NVIDIA H200";

}  // namespace

std::vector<double> interpolate_curve(const std::vector<std::pair<int, double>>& points) {
  std::vector<double> v;
  if (points.empty()) return v;
  v.push_back(points.front().second);
  for (std::size_t i = 1; i < points.size(); ++i) {
    const auto [k0, v0] = points[i - 1];
    const auto [k1, v1] = points[i];
    for (int k = k0 + 1; k <= k1; ++k)
      v.push_back(v0 + (v1 - v0) * static_cast<double>(k - k0) / static_cast<double>(k1 - k0));
  }
  return v;
}

SpeedCurve SharingPreset::curve() const {
  if (name == "independent") return SpeedCurve{name, {}};
  if (name == "time-sliced") return SpeedCurve{name, {1}};
  return SpeedCurve{name, interpolate_curve(measured)};
}

const std::vector<SharingPreset>& sharing_presets() {
  // One row a preset. Measured figures are the aggregate_speedup column of
  // the source, as measured (three decimals).
  static const std::vector<SharingPreset> presets = {
      {"time-sliced", "both", {}, "v(n) = 1: n busy share the throughput of one (a GPU-filling kernel); the default"},
      {"independent", "both", {}, "v(n) = n: each busy one at full speed, as separate devices (M/M/c)"},
      {"h200-resnet50-b1", "device",
       {{1, 1.000}, {2, 1.809}, {3, 2.163}, {4, 2.593}, {6, 2.952}, {8, 3.055}},
       std::string(kColocation) + ", resnet50-224-batch1-fp16"},
      {"h200-fcn512-b1", "device",
       {{1, 1.000}, {2, 1.480}, {3, 1.805}, {4, 1.880}, {6, 1.900}, {8, 1.927}},
       std::string(kColocation) + ", fcn-resnet50-512-batch1-fp16"},
      {"h200-mlp-b8", "device", {{1, 1.000}, {2, 1.633}, {4, 1.612}, {8, 1.633}},
       std::string(kColocation) + ", mlp-8x4096-batch8-fp16"},
      {"h200-gemm", "device", {{1, 1.000}, {2, 0.956}, {4, 0.955}, {8, 0.957}},
       std::string(kColocation) + ", gemm-8192-fp16"},
      {"h200-copy", "device", {{1, 1.000}, {2, 0.815}, {4, 0.816}, {8, 0.816}},
       std::string(kColocation) + ", copy-1GiB-fp32"},
      {"h200-resnet50-b1-threads", "replica", {{1, 1.000}, {2, 1.083}, {4, 1.171}, {8, 1.061}},
       std::string(kThreads) + ", PyTorch's default stream"},
      {"h200-resnet50-b1-streams", "replica", {{1, 1.000}, {2, 1.441}, {4, 1.592}, {8, 1.536}},
       std::string(kThreads) + ", a CUDA stream per thread"},
  };
  return presets;
}

const SharingPreset* find_sharing_preset(const std::string& name) {
  for (const auto& p : sharing_presets())
    if (p.name == name) return &p;
  return nullptr;
}

SpeedCurve batching_curve(double slowdown, int max_ongoing) {
  SpeedCurve c;
  char name[64];
  std::snprintf(name, sizeof name, "batching_slowdown %g", slowdown);
  c.name = name;
  const int n = std::clamp(max_ongoing, 1, kMaxBatchingCurve);
  c.values.reserve(static_cast<std::size_t>(n));
  for (int r = 1; r <= n; ++r) c.values.push_back(r / (1 + slowdown * (r - 1)));
  return c;
}

}  // namespace vramsim
