#pragma once
// The named concurrency curves a scenario's `serve.device_sharing` (g: busy
// replicas on one device) and `serve.replica_concurrency` (h: requests in
// service on one replica) may take (docs/serving.md). Each measured preset
// keeps the points measured and its source; counts between two measured
// ones are filled by linear interpolation, past the last the last holds.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/speed_curve.hpp"

namespace vramsim {

struct SharingPreset {
  std::string name;
  // What it is for: "both", "device" (g) or "replica" (h).
  std::string level;
  std::vector<std::pair<int, double>> measured;  // (count, throughput vs one); empty: see `curve`
  std::string source;
  SpeedCurve curve() const;
};

// Every preset, in the order docs/serving.md lists them.
const std::vector<SharingPreset>& sharing_presets();
const SharingPreset* find_sharing_preset(const std::string& name);

// v(1..max count) by linear interpolation between measured points (which
// start at count 1 with 1.0); shared by the presets and a measured curve
// file's points.
std::vector<double> interpolate_curve(const std::vector<std::pair<int, double>>& points);

// The older batching curve as h: h(r) = r / (1 + slowdown x (r - 1)), for
// r up to `max_ongoing` (at most kMaxBatchingCurve; past it the last holds).
SpeedCurve batching_curve(double slowdown, int max_ongoing);
constexpr int kMaxBatchingCurve = 4096;

}  // namespace vramsim
