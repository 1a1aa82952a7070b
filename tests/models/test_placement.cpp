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

NodeSpec gpu_node(int gpus, int cpus = 8) {
  NodeSpec s;
  s.resources.set(kCPU, cpus);
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
  EXPECT_EQ(pick("fgd", req, opts, sixes), 1u);
  // Against whole-GPU tasks node 1's 0.6 is a fragment already: filling it
  // shrinks fragmentation, so fgd packs there too.
  EXPECT_EQ(pick("fgd", req, opts, {TaskShape{a(1), a(1), 1}}), 0u);
}

// Within a node: ray and best-fit take the device with the least room that
// holds the share, first-fit the lowest index.
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
  EXPECT_EQ(pick("ray", req, opts, {}), 1u);
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
