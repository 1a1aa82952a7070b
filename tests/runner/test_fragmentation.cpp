// GPU fragmentation (the FGD measure) on hand-worked nodes, and the sampler's
// averages over a small cluster.
#include <gtest/gtest.h>

#include "analysis/fragmentation.hpp"

using namespace vramsim;

namespace {

Amount a(double v) { return to_amount(v); }

// 8 CPUs free; GPUs free: one whole, half of one, a fifth of one, one full.
NodeFree node_a() { return NodeFree{a(8), {a(0), a(0.2), a(0.5), a(1)}}; }

}  // namespace

TEST(Fragmentation, ShareTaskCannotUseGpusWithLessFreeThanItsShare) {
  // Free 0.2 and 0 are below 0.3: 0.2 GPU is fragment.
  EXPECT_EQ(unallocatable_gpu(node_a(), TaskShape{a(1), a(0.3), 1}), a(0.2));
  // A GPU with exactly the share free can take it.
  EXPECT_EQ(unallocatable_gpu(node_a(), TaskShape{a(1), a(0.5), 1}), a(0.2));
  EXPECT_EQ(unallocatable_gpu(node_a(), TaskShape{a(1), a(0.6), 1}), a(0.7));
}

TEST(Fragmentation, WholeGpuTaskCannotUsePartlyBookedGpus) {
  // One wholly free GPU: the task fits and the partial 0.5 + 0.2 is fragment.
  EXPECT_EQ(unallocatable_gpu(node_a(), TaskShape{a(1), a(1), 1}), a(0.7));
  // Two needed, one free: nothing of the node's 1.7 idle GPUs can go to it.
  EXPECT_EQ(unallocatable_gpu(node_a(), TaskShape{a(1), a(2), 1}), a(1.7));
}

TEST(Fragmentation, CpuShortOrCpuOnlyTaskMakesAllIdleGpuFragment) {
  EXPECT_EQ(unallocatable_gpu(node_a(), TaskShape{a(16), a(0.1), 1}), a(1.7));
  EXPECT_EQ(unallocatable_gpu(node_a(), TaskShape{a(1), 0, 1}), a(1.7));
  // A node without free GPU capacity has nothing to fragment.
  EXPECT_EQ(unallocatable_gpu(NodeFree{a(8), {0, 0}}, TaskShape{a(16), a(0.5), 1}), 0);
}

TEST(Fragmentation, ExpectationWeighsTasksByFrequency) {
  // (3 x 0.2 + 1 x 0.7) / 4 = 0.325 GPU.
  const std::vector<TaskShape> tasks = {{a(1), a(0.3), 1}, {a(1), a(1), 1}, {a(1), a(0.3), 2}};
  EXPECT_DOUBLE_EQ(expected_unallocatable_gpu(node_a(), tasks), a(0.325));
  const auto merged = merge_shapes(tasks);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].gpus, a(0.3));
  EXPECT_DOUBLE_EQ(merged[0].weight, 3);
  EXPECT_DOUBLE_EQ(expected_unallocatable_gpu(node_a(), merged), a(0.325));
  EXPECT_DOUBLE_EQ(expected_unallocatable_gpu(node_a(), {}), 0);
}

TEST(Fragmentation, SamplerAveragesFragmentationAllocationAndVram) {
  ClusterState c;
  NodeSpec s;
  s.resources.set(kCPU, 4);
  for (int i = 0; i < 2; ++i) s.devices.push_back(GpuDevice{i, "G", 16000, 0, 0, std::nullopt, 0});
  c.add_node(s, 0);
  NodeSpec cpu_only;
  cpu_only.resources.set(kCPU, 64);
  c.add_node(cpu_only, 0);  // no GPU: counts nowhere

  UtilisationSampler u;
  u.sample(c);  // empty: GPUs 1.0 and 1.0 free
  ResourceSet r;
  r.set(kCPU, 1);
  r.set(kGPU, 0.5);
  c.submit(DemandKind::Actor, "app", "replica app#0", r, 0);
  ASSERT_EQ(c.schedule_pending().size(), 1u);
  u.sample(c);  // free 0.5 and 1.0, 3 CPUs

  const auto res = u.evaluate({TaskShape{a(1), a(0.6), 1}});
  EXPECT_EQ(res.samples, 2u);
  EXPECT_DOUBLE_EQ(res.gpus, 2);
  // Empty: nothing is fragment; then the 0.5 left on the first GPU is.
  EXPECT_DOUBLE_EQ(res.gpu_fragmentation, (0 + 0.5) / 2);
  EXPECT_DOUBLE_EQ(res.gpu_fragmentation_share, (0 + 0.25) / 2);
  EXPECT_DOUBLE_EQ(res.gpu_allocation, (0 + 0.25) / 2);
  // Half a 16000 MB GPU booked of 32000 MB.
  EXPECT_DOUBLE_EQ(res.vram_utilisation, (0 + 0.25) / 2);
  EXPECT_EQ(UtilisationSampler().evaluate({}).samples, 0u);
}
