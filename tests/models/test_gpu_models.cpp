// The GPU model table: the traces' models resolve, figures match their
// datasheets, assumptions are flagged, and a scenario's overrides apply.
#include <gtest/gtest.h>

#include "models/gpu_models.hpp"
#include "scenario/scenario.hpp"

namespace vramsim {
namespace {

TEST(GpuModels, TableIsSortedAndNamesAreUnique) {
  const auto& t = gpu_model_table();
  ASSERT_GT(t.size(), 10u);
  for (std::size_t i = 1; i < t.size(); ++i) EXPECT_LT(t[i - 1].name, t[i].name);
  for (const auto& m : t) {
    EXPECT_GT(m.vram_mb, 0) << m.name;
    EXPECT_GT(m.fp16_tflops, 0) << m.name;
    EXPECT_FALSE(m.device_name.empty()) << m.name;
  }
}

TEST(GpuModels, EveryTraceModelResolves) {
  // openb node lists, PAI 2020 machine spec, 2026 spot node list.
  for (const char* n : {"P100", "T4", "V100M16", "V100M32", "A10", "G1", "G2", "G3", "V100", "A100-SXM4-80GB",
                        "A800-SXM4-80GB", "H800"})
    EXPECT_NE(find_gpu_model(n), nullptr) << n;
  // Common datacenter GPUs.
  for (const char* n : {"A100-SXM4-40GB", "H100-SXM5-80GB", "H100-PCIE-80GB", "H200", "L4", "L40S", "A10G",
                        "V100-SXM2-16GB", "V100-SXM2-32GB"})
    EXPECT_NE(find_gpu_model(n), nullptr) << n;
  EXPECT_EQ(find_gpu_model("B300"), nullptr);
  EXPECT_EQ(find_gpu_model("t4"), nullptr);  // names are exact
}

TEST(GpuModels, FiguresFollowTheDatasheets) {
  EXPECT_EQ(find_gpu_model("V100M16")->vram_mb, 16384);
  EXPECT_EQ(find_gpu_model("V100M32")->vram_mb, 32768);
  EXPECT_EQ(find_gpu_model("T4")->vram_mb, 15360);
  EXPECT_DOUBLE_EQ(find_gpu_model("T4")->fp16_tflops, 65.0);
  EXPECT_DOUBLE_EQ(find_gpu_model("A100-SXM4-80GB")->fp16_tflops, 312.0);
  EXPECT_DOUBLE_EQ(find_gpu_model("H100-SXM5-80GB")->fp16_tflops, 989.4);
  EXPECT_DOUBLE_EQ(find_gpu_model("P100")->fp16_tflops, 18.7);
  // A trace alias carries the figures of the model it stands for.
  EXPECT_EQ(find_gpu_model("V100M32")->device_name, find_gpu_model("V100-SXM2-32GB")->device_name);
}

TEST(GpuModels, OnlyModelsWithoutADatasheetAreAssumed) {
  for (const auto& m : gpu_model_table()) {
    const bool no_datasheet = m.name == "G1" || m.name == "G2" || m.name == "G3" || m.name == "A10G";
    EXPECT_EQ(m.assumed, no_datasheet) << m.name;
  }
}

TEST(GpuModels, PartitionCatalogueTakesItsFiguresFromTheTable) {
  for (const auto& [name, info] : gpu_catalogue()) {
    const GpuModel* m = find_gpu_model(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(info.memory_mb, m->vram_mb) << name;
    EXPECT_EQ(info.device_name, m->device_name) << name;
  }
}

// Every model with a price can be placed in a partition and every placeable
// model has a price or says why not: the catalogue is the price table's
// models. L4 and A10G, priced, are placeable; A10, H200 and RTX3090, placeable,
// say why they have no price.
TEST(GpuModels, EveryPricedModelIsPlaceableAndEveryPlaceableOneIsPricedOrSaysWhy) {
  std::size_t rows = 0;
  for (const GpuPrice& p : gpu_price_table()) {
    ++rows;
    EXPECT_TRUE(gpu_catalogue().count(std::string(p.model))) << p.model;
    EXPECT_FALSE(p.source.empty()) << p.model;
    EXPECT_EQ(find_gpu_price(p.model) != nullptr, p.priced()) << p.model;
  }
  EXPECT_EQ(rows, gpu_catalogue().size());
  for (const char* priced : {"L4", "A10G", "T4", "A100-SXM4-80GB"}) EXPECT_NE(find_gpu_price(priced), nullptr) << priced;
  for (const char* unpriced : {"A10", "H200", "RTX3090"}) {
    EXPECT_TRUE(gpu_catalogue().count(unpriced)) << unpriced;
    EXPECT_EQ(find_gpu_price(unpriced), nullptr) << unpriced;
  }
}

// One table: a model's planning figure is its device's peak row, the
// fp32-accumulate figure where the row has one (and says so), with its source.
TEST(GpuModels, FiguresComeFromThePeakRowsWithTheirModeAndSource) {
  for (const auto& m : gpu_model_table()) {
    EXPECT_FALSE(m.source.empty()) << m.name;
    if (m.assumed) continue;
    const GpuPeak* row = find_gpu_peak(m.device_name);
    ASSERT_NE(row, nullptr) << m.name;
    ASSERT_TRUE(row->tflops(m.accumulate)) << m.name;
    EXPECT_DOUBLE_EQ(m.fp16_tflops, *row->tflops(m.accumulate)) << m.name;
    EXPECT_EQ(m.source, row->source) << m.name;
    EXPECT_EQ(m.accumulate == Accumulate::Fp16, !row->tflops(Accumulate::Fp32).has_value()) << m.name;
  }
  const GpuModel* rtx = find_gpu_model("RTX3090");
  EXPECT_DOUBLE_EQ(rtx->fp16_tflops, 71.0);  // fp32 accumulate; 142 with fp16 accumulate
  EXPECT_EQ(rtx->accumulate, Accumulate::Fp32);
  EXPECT_EQ(find_gpu_model("P100")->accumulate, Accumulate::Fp16);  // no tensor cores
  EXPECT_EQ(accumulate_name(Accumulate::Fp16), "fp16");
  EXPECT_TRUE(find_gpu_model("G2")->source.rfind("assumed", 0) == 0) << find_gpu_model("G2")->source;
  EXPECT_TRUE(find_gpu_model("A10G")->source.rfind("assumed", 0) == 0) << find_gpu_model("A10G")->source;
}

TEST(GpuModels, PeakRowsMatchWholeTokensAndSkipMigSlices) {
  ASSERT_NE(find_gpu_peak("NVIDIA A10G"), nullptr);
  EXPECT_EQ(find_gpu_peak("NVIDIA A10G")->tokens, "A10G");
  EXPECT_EQ(find_gpu_peak("NVIDIA A100-SXM4-80GB")->tokens, "A100");
  EXPECT_EQ(find_gpu_peak("NVIDIA H100 PCIe")->tokens, "H100 PCIe");
  EXPECT_EQ(find_gpu_peak("NVIDIA H100 80GB HBM3 MIG 1g.10gb"), nullptr);
  EXPECT_EQ(find_gpu_peak("NVIDIA RTX A4000"), nullptr);
}

TEST(GpuModels, OverridesReplaceOrAddFigures) {
  GpuModelSet s;
  ASSERT_NE(s.find("G2"), nullptr);
  EXPECT_TRUE(s.find("G2")->assumed);
  s.set("G2", 32768, 130.0);
  EXPECT_EQ(s.find("G2")->vram_mb, 32768);
  EXPECT_DOUBLE_EQ(s.find("G2")->fp16_tflops, 130.0);
  EXPECT_FALSE(s.find("G2")->assumed);
  EXPECT_EQ(s.find("G2")->source, "scenario");
  EXPECT_EQ(find_gpu_model("G2")->vram_mb, 16384);  // the built-in table is untouched
  EXPECT_EQ(s.find("X9"), nullptr);
  s.set("X9", 1000, 1.5);
  ASSERT_NE(s.find("X9"), nullptr);
  EXPECT_EQ(s.find("X9")->vram_mb, 1000);
  EXPECT_THROW(s.set("X9", 0, 1.0), std::invalid_argument);
  EXPECT_THROW(s.set("X9", 10, -1.0), std::invalid_argument);
}

}  // namespace
}  // namespace vramsim

namespace vramsim {
namespace {

// What CUDA can give: measured on the H200, the seed's figure on the
// A100-SXM4-40GB, else memory.total less 520 MiB, marked assumed.
TEST(GpuModels, CudaTotalIsKnownForTwoModelsAndAssumedForTheRest) {
  const GpuModel* h200 = find_gpu_model("H200");
  ASSERT_NE(h200, nullptr);
  EXPECT_EQ(h200->cuda_total_mb, 143155);
  EXPECT_EQ(h200->vram_mb - h200->cuda_total_mb, 616);
  EXPECT_FALSE(h200->cuda_total_assumed);
  const GpuModel* a100 = find_gpu_model("A100-SXM4-40GB");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->cuda_total_mb, 40440);
  EXPECT_FALSE(a100->cuda_total_assumed);
  for (const auto& m : gpu_model_table()) {
    EXPECT_LT(m.cuda_total_mb, m.vram_mb) << m.name;
    if (m.name != "H200" && m.name != "A100-SXM4-40GB") {
      EXPECT_TRUE(m.cuda_total_assumed) << m.name;
      EXPECT_EQ(m.cuda_total_mb, m.vram_mb - 520) << m.name;
    }
  }
  GpuModelSet set;
  set.set("H200", 100000, 1);
  EXPECT_EQ(set.find("H200")->cuda_total_mb, 100000 - 520);
  EXPECT_TRUE(set.find("H200")->cuda_total_assumed);
}

}  // namespace
}  // namespace vramsim
