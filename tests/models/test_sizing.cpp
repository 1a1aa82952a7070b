#include "models/sizing.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/registry.hpp"

namespace vramsim {
namespace {

std::shared_ptr<const SizingPolicy> sizing(const std::string& variant) {
  return PolicyRegistry::instance().make<SizingPolicy>(variant);
}

SizingRequest req(std::optional<std::int64_t> gmb, bool disable_gpu = false) {
  return SizingRequest{"X", gmb, disable_gpu};
}

ClusterGpuView view(bool advertised, std::optional<std::int64_t> min_mb, bool elastic) {
  return ClusterGpuView{advertised, min_mb, elastic};
}

// Views on which no variant takes the VRAM branch, and on which both do.
const ClusterGpuView kStaticRtx = view(false, 24576, false);
const ClusterGpuView kAdvertised = view(true, 24576, true);

class SizingBothVariants : public ::testing::TestWithParam<std::string> {
 protected:
  std::shared_ptr<const SizingPolicy> p = sizing(GetParam());
};

INSTANTIATE_TEST_SUITE_P(Variants, SizingBothVariants, ::testing::Values("legacy", "fixed"));

// --- branch 1: no GPU -----------------------------------------------------------

TEST_P(SizingBothVariants, DisableGpuGivesNoGpuEvenWithVramAdvertised) {
  const auto r = p->size(req(8000, true), kAdvertised);
  EXPECT_EQ(r.branch, "disabled");
  EXPECT_EQ(r.num_gpus, 0.0);
  EXPECT_FALSE(r.vram_mb);
  EXPECT_TRUE(r.ok());
}

TEST_P(SizingBothVariants, AbsentGpuMemoryGivesNoGpu) {
  for (const auto& v : {kAdvertised, kStaticRtx, view(false, std::nullopt, true)}) {
    const auto r = p->size(req(std::nullopt), v);
    EXPECT_EQ(r.branch, "disabled");
    EXPECT_EQ(r.num_gpus, 0.0);
    EXPECT_FALSE(r.vram_mb);
  }
}

TEST_P(SizingBothVariants, ZeroGpuMemoryGivesNoGpu) {
  for (const auto& v : {kAdvertised, kStaticRtx, view(false, std::nullopt, true)}) {
    const auto r = p->size(req(0), v);
    EXPECT_EQ(r.branch, "disabled");
    EXPECT_EQ(r.num_gpus, 0.0);
    EXPECT_FALSE(r.vram_mb);
  }
}

// --- a Ray request stated as num_gpus (vramsim import ray-serve) -------------------

TEST_P(SizingBothVariants, AStatedNumGpusIsTakenAsIsOnEveryView) {
  for (const auto& v : {kAdvertised, kStaticRtx, view(false, std::nullopt, true)}) {
    for (double n : {0.25, 1.0, 2.0}) {
      SizingRequest r = req(std::nullopt);
      r.num_gpus = n;
      const auto out = p->size(r, v);
      EXPECT_EQ(out.branch, "stated");
      EXPECT_EQ(out.num_gpus, n);
      EXPECT_FALSE(out.vram_mb) << "a stated request asks for no VRAM_MB";
    }
  }
  SizingRequest off = req(std::nullopt, true);
  off.num_gpus = 0.5;
  EXPECT_EQ(p->size(off, kAdvertised).branch, "disabled");
}

// --- branch 2: the whole-GPU sentinel ----------------------------------------------

TEST_P(SizingBothVariants, MinusOneBooksWholeGpuOnEveryView) {
  for (const auto& v : {kAdvertised, kStaticRtx, view(false, std::nullopt, true),
                        view(false, std::nullopt, false), view(true, std::nullopt, true)}) {
    const auto r = p->size(req(-1), v);
    EXPECT_EQ(r.branch, "whole_gpu_sentinel");
    EXPECT_EQ(r.num_gpus, 1.0);
    EXPECT_FALSE(r.vram_mb) << "-1 never asks for VRAM_MB";
    EXPECT_TRUE(r.ok());
  }
}

TEST_P(SizingBothVariants, OtherNegativeGpuMemoryIsAUserError) {
  const auto r = p->size(req(-2), kAdvertised);
  EXPECT_EQ(r.branch, "error");
  EXPECT_FALSE(r.ok());
}

// --- branch 3: VRAM -------------------------------------------------------------------

TEST_P(SizingBothVariants, VramAdvertisedTakesVramBranch) {
  const auto r = p->size(req(8000), kAdvertised);
  EXPECT_EQ(r.branch, "vram");
  EXPECT_DOUBLE_EQ(r.num_gpus, 0.01);
  ASSERT_TRUE(r.vram_mb);
  EXPECT_EQ(*r.vram_mb, 8000);
  EXPECT_TRUE(r.warning.empty());
}

TEST_P(SizingBothVariants, VramAdvertisedWinsOverKnownGpuSizeEvenWhenOversized) {
  // The VRAM branch never compares against the smallest GPU.
  const auto r = p->size(req(30000), kAdvertised);
  EXPECT_EQ(r.branch, "vram");
  EXPECT_EQ(*r.vram_mb, 30000);
}

TEST(Sizing, LegacyOnScaledToZeroElasticClusterFallsBackToWholeGpuWithWarning) {
  const auto r = sizing("legacy")->size(req(8000), view(false, std::nullopt, true));
  EXPECT_EQ(r.branch, "whole_gpu_fallback");
  EXPECT_EQ(r.num_gpus, 1.0);
  EXPECT_FALSE(r.vram_mb);
  EXPECT_FALSE(r.warning.empty());
  EXPECT_NE(r.warning.find("'X'"), std::string::npos) << r.warning;
  EXPECT_TRUE(r.ok());
}

TEST(Sizing, FixedOnScaledToZeroElasticClusterRequestsVramUpFront) {
  const auto r = sizing("fixed")->size(req(8000), view(false, std::nullopt, true));
  EXPECT_EQ(r.branch, "vram");
  EXPECT_DOUBLE_EQ(r.num_gpus, 0.01);
  ASSERT_TRUE(r.vram_mb);
  EXPECT_EQ(*r.vram_mb, 8000);
  EXPECT_TRUE(r.warning.empty());
}

TEST(Sizing, FixedOnStaticClusterWithNoGpuKnownStillFallsBackToWholeGpu) {
  // The elastic rule only applies in SLURM mode.
  const auto r = sizing("fixed")->size(req(8000), view(false, std::nullopt, false));
  EXPECT_EQ(r.branch, "whole_gpu_fallback");
  EXPECT_EQ(r.num_gpus, 1.0);
  EXPECT_FALSE(r.warning.empty());
}

TEST(Sizing, FixedOnElasticClusterWithKnownGpuUsesFraction) {
  // "Clusters with a known GPU are unaffected."
  const auto r = sizing("fixed")->size(req(8000), view(false, 24576, true));
  EXPECT_EQ(r.branch, "fraction");
  EXPECT_DOUBLE_EQ(r.num_gpus, 0.33);
  EXPECT_FALSE(r.vram_mb);
}

// --- branch 4: fraction -----------------------------------------------------------------

TEST_P(SizingBothVariants, FractionIsRoundedToTwoDecimals) {
  const auto r = p->size(req(8000), kStaticRtx);  // 0.3255...
  EXPECT_EQ(r.branch, "fraction");
  EXPECT_DOUBLE_EQ(r.num_gpus, 0.33);
  EXPECT_FALSE(r.vram_mb);
  EXPECT_TRUE(r.ok());
}

TEST_P(SizingBothVariants, FractionWithinGraceIsCappedAtOneGpu) {
  const auto r = p->size(req(26000), kStaticRtx);  // 1.058 -> 1.06 -> 1.0
  EXPECT_EQ(r.branch, "fraction");
  EXPECT_DOUBLE_EQ(r.num_gpus, 1.0);
  EXPECT_TRUE(r.ok());
}

TEST_P(SizingBothVariants, FractionExactlyAtGraceIsAccepted) {
  const auto r = p->size(req(27156), kStaticRtx);  // 1.10498 -> 1.10, not > 1.1
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_DOUBLE_EQ(r.num_gpus, 1.0);
}

TEST_P(SizingBothVariants, FractionJustAboveGraceIsRejected) {
  const auto r = p->size(req(27157), kStaticRtx);  // 1.10502 -> 1.11
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.branch, "error");
}

TEST_P(SizingBothVariants, OversizedRequestIsAUserErrorWithExactMessage) {
  const auto r = p->size(req(30000), kStaticRtx);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.branch, "error");
  EXPECT_EQ(r.error,
            "Application 'X' requests gpu_memory_mb=30000, which does not fit the smallest GPU on the "
            "cluster (24576 MB)");
}

// The reference builder computes round(gmb / min, 2) with Python's round,
// which rounds an exact half to even: 5120 MB on a 40960 MB A100 is 0.125,
// booked as 0.12, so eight such replicas share one device.
TEST_P(SizingBothVariants, FractionTieRoundsHalfToEvenLikePythonRound) {
  const ClusterGpuView a100 = view(false, 40960, false);
  EXPECT_DOUBLE_EQ(p->size(req(5120), a100).num_gpus, 0.12);   // round(0.125, 2)
  EXPECT_DOUBLE_EQ(p->size(req(15360), a100).num_gpus, 0.38);  // round(0.375, 2)
  EXPECT_DOUBLE_EQ(p->size(req(25600), a100).num_gpus, 0.62);  // round(0.625, 2)
  EXPECT_DOUBLE_EQ(p->size(req(35840), a100).num_gpus, 0.88);  // round(0.875, 2)
}

// --- branch 5 and idempotence ----------------------------------------------------------------

TEST_P(SizingBothVariants, StaticClusterWithNoGpuFallsBackToWholeGpu) {
  const auto r = p->size(req(8000), view(false, std::nullopt, false));
  EXPECT_EQ(r.branch, "whole_gpu_fallback");
  EXPECT_EQ(r.num_gpus, 1.0);
  EXPECT_FALSE(r.warning.empty());
}

TEST_P(SizingBothVariants, ResizingDependsOnlyOnTheInputNotOnEarlierCalls) {
  // A redeploy re-sizes: a result must not depend on what was sized before.
  // Every case sized in one order and again in the reverse order, so a
  // policy that carried state from call to call would answer differently.
  std::vector<std::pair<SizingRequest, ClusterGpuView>> cases;
  for (const auto& v : {kAdvertised, kStaticRtx, view(false, std::nullopt, true),
                        view(false, std::nullopt, false)})
    for (std::optional<std::int64_t> gmb : {std::optional<std::int64_t>{}, std::optional<std::int64_t>{0},
                                            std::optional<std::int64_t>{-1}, std::optional<std::int64_t>{8000},
                                            std::optional<std::int64_t>{30000}})
      cases.emplace_back(req(gmb), v);
  std::vector<SizingResult> forward;
  for (const auto& [r, v] : cases) forward.push_back(p->size(r, v));
  for (std::size_t i = cases.size(); i-- > 0;) {
    const auto again = p->size(cases[i].first, cases[i].second);
    EXPECT_EQ(again.num_gpus, forward[i].num_gpus) << i;
    EXPECT_EQ(again.vram_mb, forward[i].vram_mb) << i;
    EXPECT_EQ(again.branch, forward[i].branch) << i;
    EXPECT_EQ(again.warning, forward[i].warning) << i;
    EXPECT_EQ(again.error, forward[i].error) << i;
  }
  // The cases differ, so the comparison above is not between equal constants.
  EXPECT_NE(forward.front().branch, forward[3].branch);
}

// --- summing -------------------------------------------------------------------------------

TEST(Sizing, LegacySumTruncatesEpsilonDemandToZero) {
  EXPECT_EQ(sizing("legacy")->sum_num_gpus({{0.01, 4}}), 0.0);
  EXPECT_EQ(sizing("legacy")->sum_num_gpus({{1.0, 2}, {0.01, 3}}), 2.0);
}

TEST(Sizing, FixedSumKeepsFractionalDemand) {
  EXPECT_NEAR(sizing("fixed")->sum_num_gpus({{0.01, 4}}), 0.04, 1e-12);
  EXPECT_NEAR(sizing("fixed")->sum_num_gpus({{1.0, 2}, {0.33, 3}}), 2.99, 1e-12);
}

TEST_P(SizingBothVariants, SumOfNothingIsZero) { EXPECT_EQ(p->sum_num_gpus({}), 0.0); }

}  // namespace
}  // namespace vramsim
