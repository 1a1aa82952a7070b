// The sharing presets against their source: every measured point of each
// H200 preset is the aggregate_speedup of its row in
// ../shared/data/gpu-colocation (read here, not copied), and the counts in
// between are the linear interpolation of their neighbours.
#include "models/sharing_curves.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace vramsim {
namespace {

std::string colocation_file(const std::string& name) {
  return std::string(VRAMSIM_SOURCE_DIR) + "/../shared/data/gpu-colocation/" + name;
}

// (workload[, streams], k) -> aggregate_speedup, from one of the CSVs.
std::map<std::string, double> speedups(const std::string& file, bool streams) {
  std::map<std::string, double> out;
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string workload, stream, k, speedup;
    std::getline(row, workload, ',');
    if (streams) std::getline(row, stream, ',');
    std::getline(row, k, ',');
    std::getline(row, speedup, ',');
    out[workload + (streams ? "/" + stream : "") + "/" + k] = std::stod(speedup);
  }
  return out;
}

TEST(SharingCurves, MeasuredPresetsAreTheirSourcesRows) {
  const std::string across = colocation_file("colocation-h200.csv"), within = colocation_file("replica-threads-h200.csv");
  if (!std::filesystem::exists(across) || !std::filesystem::exists(within))
    GTEST_SKIP() << "the colocation data is absent: no " << across;
  const auto g = speedups(across, false), h = speedups(within, true);
  const std::map<std::string, std::string> rows = {
      {"h200-resnet50-b1", "resnet50-224-batch1-fp16"}, {"h200-fcn512-b1", "fcn-resnet50-512-batch1-fp16"},
      {"h200-mlp-b8", "mlp-8x4096-batch8-fp16"},        {"h200-gemm", "gemm-8192-fp16"},
      {"h200-copy", "copy-1GiB-fp32"},                  {"h200-resnet50-b1-threads", "resnet50-224-batch1-fp16/default"},
      {"h200-resnet50-b1-streams", "resnet50-224-batch1-fp16/per-thread"}};
  for (const auto& [preset, row] : rows) {
    const SharingPreset* p = find_sharing_preset(preset);
    ASSERT_NE(p, nullptr) << preset;
    const auto& source = p->level == "replica" ? h : g;
    const SpeedCurve c = p->curve();
    int measured = 0;
    for (int k = 1; k <= 8; ++k)
      if (auto it = source.find(row + "/" + std::to_string(k)); it != source.end()) {
        EXPECT_DOUBLE_EQ(c.at(static_cast<std::size_t>(k)), it->second) << preset << " k=" << k;
        ++measured;
      }
    EXPECT_GE(measured, 4) << preset;
    EXPECT_EQ(c.values.size(), 8u) << preset;
    EXPECT_EQ(c.at(20), c.at(8)) << preset << ": past the last count the last value holds";
  }
  // An unmeasured count: ResNet-50's k = 5 lies halfway between 4 and 6.
  EXPECT_DOUBLE_EQ(find_sharing_preset("h200-resnet50-b1")->curve().at(5),
                   (g.at("resnet50-224-batch1-fp16/4") + g.at("resnet50-224-batch1-fp16/6")) / 2);
}

TEST(SharingCurves, TimeSlicedAndIndependentAreTheirDefinitions) {
  const SpeedCurve t = find_sharing_preset("time-sliced")->curve(), i = find_sharing_preset("independent")->curve();
  for (std::size_t n = 1; n <= 64; ++n) {
    EXPECT_EQ(t.at(n), 1.0);
    EXPECT_EQ(i.at(n), static_cast<double>(n));
    EXPECT_DOUBLE_EQ(t.share(n) * static_cast<double>(n), 1.0);
    EXPECT_EQ(i.share(n), 1.0);
  }
  EXPECT_EQ(find_sharing_preset("no-such"), nullptr);
}

// batching_slowdown s as h: two requests at once give h(2) = 2 / (1 + s),
// so each runs at 1 / (1 + s), as the older curve slowed the second.
TEST(SharingCurves, TheBatchingSlowdownIsAnH) {
  const SpeedCurve c = batching_curve(0.5, 4);
  EXPECT_DOUBLE_EQ(c.at(1), 1.0);
  EXPECT_DOUBLE_EQ(c.share(2), 1 / 1.5);
  EXPECT_DOUBLE_EQ(c.share(4), 1 / 2.5);
  EXPECT_EQ(c.values.size(), 4u);
  EXPECT_EQ(batching_curve(0.1, 1 << 20).values.size(), static_cast<std::size_t>(kMaxBatchingCurve));
}

}  // namespace
}  // namespace vramsim
