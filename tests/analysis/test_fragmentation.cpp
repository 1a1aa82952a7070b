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

// The FGD simulator's "no access" case: a GPU task naming GPU models the
// node is not of can use none of its GPUs; one naming the node's model, or
// none, is measured as before. A CPU-only task never uses GPUs anyway.
TEST(Fragmentation, TaskNamingOtherModelsCannotUseAnyOfTheNodesGpus) {
  NodeFree t4 = node_a();
  t4.model = "T4";
  EXPECT_EQ(unallocatable_gpu(t4, TaskShape{a(1), a(0.3), 1, {"V100M16"}}), a(1.7));
  EXPECT_EQ(unallocatable_gpu(t4, TaskShape{a(1), a(0.3), 1, {"T4", "V100M16"}}), a(0.2));
  EXPECT_EQ(unallocatable_gpu(t4, TaskShape{a(1), a(0.3), 1, {}}), a(0.2));
  EXPECT_EQ(unallocatable_gpu(t4, TaskShape{a(1), a(1), 1, {"A10"}}), a(1.7));
  EXPECT_EQ(unallocatable_gpu(t4, TaskShape{a(1), a(1), 1, {"T4"}}), a(0.7));
  EXPECT_EQ(unallocatable_gpu(t4, TaskShape{a(1), 0, 1, {"A10"}}), a(1.7));
  // Half the tasks a 0.3 share of any model (0.2 fragment), half a whole A10
  // (all 1.7): (0.2 + 1.7) / 2; blind to the model it was (0.2 + 0.7) / 2.
  const std::vector<TaskShape> tasks = {{a(1), a(0.3), 1, {}}, {a(1), a(1), 1, {"A10"}}};
  EXPECT_DOUBLE_EQ(expected_unallocatable_gpu(t4, tasks), a(0.95));
}

TEST(Fragmentation, ShapesNamingOtherModelsStayApart) {
  const std::vector<TaskShape> tasks = {
      {a(1), a(0.3), 1, {}}, {a(1), a(0.3), 2, {"T4"}}, {a(1), a(0.3), 4, {"T4"}}, {a(1), a(0.3), 8, {"A10", "T4"}}};
  const auto merged = merge_shapes(tasks);
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_TRUE(merged[0].models.empty());
  EXPECT_DOUBLE_EQ(merged[0].weight, 1);
  EXPECT_EQ(merged[1].models, (std::vector<std::string>{"A10", "T4"}));
  EXPECT_DOUBLE_EQ(merged[1].weight, 8);
  EXPECT_EQ(merged[2].models, std::vector<std::string>{"T4"});
  EXPECT_DOUBLE_EQ(merged[2].weight, 6);
}

TEST(Fragmentation, AcceleratorResourceNamesItsModels) {
  EXPECT_EQ(accelerator_models("accelerator_type:V100M32|T4"), (std::vector<std::string>{"T4", "V100M32"}));
  EXPECT_EQ(accelerator_models("accelerator_type:A100"), std::vector<std::string>{"A100"});
  EXPECT_TRUE(accelerator_models("CPU").empty());
  EXPECT_TRUE(accelerator_models("slurm_job_id:3").empty());
  EXPECT_TRUE(runs_on_model({}, "T4"));
  EXPECT_TRUE(runs_on_model({"A10", "T4"}, "T4"));
  EXPECT_FALSE(runs_on_model({"A10"}, "T4"));
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
