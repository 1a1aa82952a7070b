// Placement variants as pure choices over a cluster snapshot: nodes are
// registered in a ClusterState, the engine lists the options a request fits,
// each variant picks one. No scenario runs.
#include <gtest/gtest.h>

#include "engine/cluster_state.hpp"
#include "models/placement.hpp"
#include "models/registry.hpp"

using namespace vramsim;

namespace {

Amount a(double v) { return to_amount(v); }

NodeSpec gpu_node(int gpus, int cpus = 8, const std::string& model = "T4") {
  NodeSpec s;
  s.resources.set(kCPU, cpus);
  s.accelerator_type = model;
  for (int g = 0; g < gpus; ++g) s.devices.push_back(GpuDevice{g, "Tesla T4", 15360, 0, 0, std::nullopt, 0});
  return s;
}

// Books `share` of device `dev` of `node` (as a placed replica would).
void book(ClusterState& c, const NodeId& node, double share) {
  const ResourceSet req{{kCPU, 0.0}, {kGPU, share}};
  c.submit(DemandKind::Actor, "x", "x", req, 0);
  const auto made = c.schedule_pending();
  ASSERT_EQ(made.size(), 1u);
  ASSERT_EQ(made[0].node, node);
}

std::size_t pick(const std::string& variant, const ResourceSet& req, const std::vector<PlacementOption>& options,
                 const std::vector<TaskShape>& typical) {
  return PolicyRegistry::instance().make<PlacementPolicy>(variant)->choose(req, options, typical);
}

}  // namespace

TEST(Placement, OptionsListEveryNodeAndEachDistinctFreeShare) {
  ClusterState c;
  const NodeId n1 = c.add_node(gpu_node(2), 0);
  const NodeId n2 = c.add_node(gpu_node(1), 0);
  book(c, n1, 0.6);  // node-1: device 0 has 0.4 free, device 1 all
  const auto opts = c.placement_options(ResourceSet{{kCPU, 1.0}, {kGPU, 0.3}});
  ASSERT_EQ(opts.size(), 3u);
  EXPECT_EQ(opts[0].node->id, n1);
  EXPECT_EQ(opts[0].placement.devices, std::vector<int>{0});
  EXPECT_EQ(opts[1].placement.devices, std::vector<int>{1});
  EXPECT_EQ(opts[2].node->id, n2);
  // Whole GPUs: one option per node with enough wholly free devices.
  EXPECT_EQ(c.placement_options(ResourceSet{{kCPU, 1.0}, {kGPU, 1.0}}).size(), 2u);
  EXPECT_EQ(c.placement_options(ResourceSet{{kCPU, 1.0}, {kGPU, 2.0}}).size(), 0u);
}

// Node 1 has 0.6 of its only GPU free, node 2 a whole GPU. A share of 0.3:
// first-fit and best-fit take node 1; fgd, against a workload of 0.6 shares,
// keeps node 1's 0.6 usable and takes node 2, where 0.7 stays usable.
TEST(Placement, VariantsDifferWhereFragmentationDoes) {
  ClusterState c;
  c.add_node(gpu_node(1), 0);
  c.add_node(gpu_node(1), 0);
  book(c, "node-1", 0.4);
  const ResourceSet req{{kCPU, 1.0}, {kGPU, 0.3}};
  const auto opts = c.placement_options(req);
  ASSERT_EQ(opts.size(), 2u);
  const std::vector<TaskShape> sixes = {TaskShape{a(1), a(0.6), 1}};
  EXPECT_EQ(pick("ray", req, opts, sixes), 0u);
  EXPECT_EQ(pick("first-fit", req, opts, sixes), 0u);
  EXPECT_EQ(pick("best-fit", req, opts, sixes), 0u);
  EXPECT_EQ(pick("best-fit-gpu", req, opts, sixes), 0u);
  EXPECT_EQ(pick("fgd", req, opts, sixes), 1u);
  // Against whole-GPU tasks node 1's 0.6 is a fragment already: filling it
  // shrinks fragmentation, so fgd packs there too.
  EXPECT_EQ(pick("fgd", req, opts, {TaskShape{a(1), a(1), 1}}), 0u);
}

// Within a node: ray, best-fit and best-fit-gpu take the device with the
// least room that holds the share, first-fit the lowest index.
TEST(Placement, DeviceChoiceWithinANode) {
  ClusterState c;
  c.add_node(gpu_node(2), 0);
  book(c, "node-1", 1.0);  // demand 1 on device 0
  book(c, "node-1", 0.5);  // device 1
  c.withdraw(1);           // device 0 all free again, device 1 half
  const ResourceSet req{{kCPU, 1.0}, {kGPU, 0.5}};
  const auto opts = c.placement_options(req);
  ASSERT_EQ(opts.size(), 2u);
  EXPECT_EQ(opts[0].placement.devices, std::vector<int>{0});
  EXPECT_EQ(pick("first-fit", req, opts, {}), 0u);
  EXPECT_EQ(pick("best-fit", req, opts, {}), 1u);
  EXPECT_EQ(pick("best-fit-gpu", req, opts, {}), 1u);
  EXPECT_EQ(pick("ray", req, opts, {}), 1u);
}

// A share of any model, an A10 node first and a T4 node second, both free.
// Against typical tasks of half an A10, the T4 node's GPU is all fragment
// already and filling half of it shrinks that: fgd takes the T4 and keeps the
// A10 for the tasks that need it. Blind to the model, both nodes score alike
// and the first (the A10) was taken.
TEST(Placement, FgdKeepsTheNamedModelsNodesForTheTasksThatNameThem) {
  ClusterState c;
  c.add_node(gpu_node(1, 8, "A10"), 0);
  c.add_node(gpu_node(1, 8, "T4"), 0);
  const ResourceSet req{{kCPU, 1.0}, {kGPU, 0.5}};
  const auto opts = c.placement_options(req);
  ASSERT_EQ(opts.size(), 2u);
  EXPECT_EQ(pick("fgd", req, opts, {TaskShape{a(1), a(0.5), 1, {"A10"}}}), 1u);
  EXPECT_EQ(pick("fgd", req, opts, {TaskShape{a(1), a(0.5), 1, {}}}), 0u);
}

// The FGD paper's best-fit weighs the CPU left free (over 128 cores) and the
// GPU left free (over 8 GPUs) half and half. Node 1: one GPU, 64 cores; node
// 2: two GPUs, 4 cores. A 0.5 share with 1 core leaves node 1 0.5 * 63/128 +
// 0.5 * 0.5/8 = 0.277 and node 2 0.5 * 3/128 + 0.5 * 1.5/8 = 0.105: best-fit
// takes node 2. best-fit-gpu counts the GPU left only (0.5 against 1.5) and
// takes node 1.
TEST(Placement, BestFitWeighsCpuAndGpuLeftBestFitGpuOnlyTheGpu) {
  ClusterState c;
  c.add_node(gpu_node(1, 64), 0);
  c.add_node(gpu_node(2, 4), 0);
  const ResourceSet req{{kCPU, 1.0}, {kGPU, 0.5}};
  const auto opts = c.placement_options(req);
  ASSERT_EQ(opts.size(), 2u);  // node 2's two free devices are one free share
  EXPECT_EQ(opts[1].node->id, "node-2");
  EXPECT_EQ(pick("best-fit", req, opts, {}), 1u);
  EXPECT_EQ(pick("best-fit-gpu", req, opts, {}), 0u);
  EXPECT_EQ(pick("first-fit", req, opts, {}), 0u);
}

// The popularity cut counts a shape with its models: three shapes of one
// size, 40% of any model, 35% T4 only, 25% A10 only; at 70% the first two are
// kept, apart. Merged blind to the model they were one shape of 100%.
TEST(Placement, TypicalTasksCountTheModelsAsPartOfTheShape) {
  const std::vector<TaskShape> tasks = {
      {a(1), a(0.5), 40, {}}, {a(1), a(0.5), 35, {"T4"}}, {a(1), a(0.5), 25, {"A10"}}};
  const auto t = typical_tasks(tasks, 0.7);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_TRUE(t[0].models.empty());
  EXPECT_DOUBLE_EQ(t[0].weight, 40);
  EXPECT_EQ(t[1].models, std::vector<std::string>{"T4"});
  EXPECT_DOUBLE_EQ(t[1].weight, 35);
}

TEST(Placement, TypicalTasksKeepTheMostFrequentUpToThePopularity) {
  const std::vector<TaskShape> tasks = {{a(1), a(0.5), 50}, {a(2), a(1), 30}, {a(1), a(0.5), 10},
                                        {a(4), a(2), 5},   {a(1), a(0.1), 5}};
  const auto t = typical_tasks(tasks, 0.9);
  ASSERT_EQ(t.size(), 2u);  // 60 + 30 of 100
  EXPECT_EQ(t[0].gpus, a(0.5));
  EXPECT_DOUBLE_EQ(t[0].weight, 60);
  EXPECT_EQ(t[1].gpus, a(1));
  EXPECT_EQ(typical_tasks(tasks, 1.0).size(), 4u);
  EXPECT_TRUE(typical_tasks({}, 0.95).empty());
}
