#include "engine/cluster_state.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace vramsim {
namespace {

constexpr std::int64_t kDeviceMB = 24576;

// A worker node as a SLURM job registers it: `gpus` devices of 24 GiB and a
// node-level VRAM_MB that is their sum.
NodeSpec gpu_node(int gpus, std::string job = "", std::int64_t device_mb = kDeviceMB) {
  NodeSpec s;
  s.ip = "10.0.0." + std::to_string(gpus);
  s.slurm_job_id = job;
  s.accelerator_type = "A10G";
  s.resources = ResourceSet{{kCPU, 8}, {kMemory, 64e9}};
  s.resources.set(kVramMB, static_cast<double>(gpus * device_mb));
  if (!job.empty()) s.resources.set(slurm_job_resource(job), 1);
  for (int i = 0; i < gpus; ++i) s.devices.push_back(GpuDevice{0, "NVIDIA A10G", device_mb, 0, 0, {}, 0});
  return s;
}

ResourceSet gpu(double g) { return ResourceSet{{kGPU, g}}; }

class ClusterStateTest : public ::testing::Test {
 protected:
  ClusterState cs;
  DemandId actor(ResourceSet r, std::string label = "replica") {
    return cs.submit(DemandKind::Actor, "app", std::move(label), std::move(r), 0);
  }
  const GpuDevice& dev(const NodeId& n, int i) { return cs.node(n)->devices().at(static_cast<std::size_t>(i)); }
};

// --- nodes ---------------------------------------------------------------------

TEST_F(ClusterStateTest, IdleWorkersAndMembershipVersionFollowEveryChange) {
  NodeSpec head;
  head.head = true;
  head.resources = ResourceSet{{kCPU, 4}};
  cs.add_node(head, 0);
  EXPECT_EQ(cs.idle_worker_count(), 0u);  // the head never counts
  const auto v0 = cs.membership_version();
  const NodeId n1 = cs.add_node(gpu_node(1, "1"), 0);
  cs.add_node(gpu_node(1, "2"), 0);
  EXPECT_EQ(cs.idle_worker_count(), 2u);
  EXPECT_NE(cs.membership_version(), v0);
  const auto v1 = cs.membership_version();
  const DemandId d = actor(gpu(0.5));
  ASSERT_EQ(cs.schedule_pending().size(), 1u);
  EXPECT_EQ(cs.idle_worker_count(), 1u);
  EXPECT_EQ(cs.membership_version(), v1);  // bookings leave membership alone
  cs.withdraw(d);
  EXPECT_EQ(cs.idle_worker_count(), 2u);
  actor(gpu(0.5));
  ASSERT_EQ(cs.schedule_pending().size(), 1u);
  cs.remove_node(n1);  // the busy node leaves
  EXPECT_EQ(cs.idle_worker_count(), 1u);
  EXPECT_NE(cs.membership_version(), v1);
}

TEST_F(ClusterStateTest, AddNodeAssignsIdsAndDerivesGpuTotal) {
  NodeSpec head;
  head.head = true;
  head.resources = ResourceSet{{kCPU, 4}};
  EXPECT_EQ(cs.add_node(head, 0), "head");
  auto spec = gpu_node(2, "17");
  spec.resources.set(kGPU, 5);  // inconsistent with the device list: corrected
  const NodeId n1 = cs.add_node(spec, 10);
  const NodeId n2 = cs.add_node(gpu_node(1), 20);
  EXPECT_EQ(n1, "node-1");
  EXPECT_EQ(n2, "node-2");
  const Node* n = cs.node(n1);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->total().get(kGPU), 2.0);
  EXPECT_TRUE(n->available == n->total());
  EXPECT_EQ(n->registered_at, 10);
  EXPECT_TRUE(n->alive());
  ASSERT_EQ(n->devices().size(), 2u);
  EXPECT_EQ(n->devices()[0].index, 0);
  EXPECT_EQ(n->devices()[1].index, 1);
  auto alive = cs.alive_nodes();
  ASSERT_EQ(alive.size(), 3u);
  EXPECT_EQ(alive[0]->id, "head");
  EXPECT_EQ(alive[1]->id, "node-1");
  EXPECT_EQ(alive[2]->id, "node-2");
  EXPECT_EQ(cs.node("node-99"), nullptr);
  EXPECT_THROW(cs.add_node(head, 30), std::logic_error) << "a second head";
}

// "node-<k>" is found by its number: a spelling of another id that parses
// to the same number, or no number at all, names no node, and removing it
// leaves the node alive.
TEST_F(ClusterStateTest, OnlyTheExactIdNamesANode) {
  NodeSpec head;
  head.head = true;
  cs.add_node(head, 0);
  const NodeId n1 = cs.add_node(gpu_node(1, "5"), 0);
  cs.add_node(gpu_node(1, "6"), 0);
  ASSERT_EQ(n1, "node-1");
  ASSERT_NE(cs.node("node-2"), nullptr);
  EXPECT_EQ(cs.node("node-2")->spec.slurm_job_id, "6");
  for (const std::string bad : {"node-01", "node-", "node-0", "node-1x", "node-+1", "node--1", " node-1", "node-3",
                                "node-18446744073709551617", "Node-1", "1"})
    EXPECT_EQ(cs.node(bad), nullptr) << bad;
  EXPECT_TRUE(cs.remove_node("node-01").empty());
  EXPECT_TRUE(cs.node("node-1")->alive());
  EXPECT_EQ(cs.node("head")->id, "head");
  cs.remove_node("node-1");
  EXPECT_FALSE(cs.node("node-1")->alive());
}

TEST_F(ClusterStateTest, NodeForJob) {
  cs.add_node(gpu_node(1, "100"), 0);
  const NodeId b = cs.add_node(gpu_node(1, "200"), 0);
  ASSERT_NE(cs.node_for_job("200"), nullptr);
  EXPECT_EQ(cs.node_for_job("200")->id, b);
  EXPECT_EQ(cs.node_for_job("300"), nullptr);
  cs.remove_node(b);
  EXPECT_EQ(cs.node_for_job("200"), nullptr) << "a dead node no longer answers for its job";
  const NodeId c = cs.add_node(gpu_node(1, "200"), 5);  // requeued job, new node
  ASSERT_NE(cs.node_for_job("200"), nullptr);
  EXPECT_EQ(cs.node_for_job("200")->id, c);
}

// --- fractional GPUs -----------------------------------------------------------

TEST_F(ClusterStateTest, FractionalNeverOverbooksOneDevice) {
  const NodeId n = cs.add_node(gpu_node(1), 0);
  std::vector<DemandId> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(actor(gpu(0.3)));
  auto made = cs.schedule_pending();
  ASSERT_EQ(made.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(made[i].demand, ids[i]);
    EXPECT_EQ(made[i].node, n);
    EXPECT_EQ(made[i].devices, (std::vector<int>{0}));
    ASSERT_EQ(made[i].device_fractions.size(), 1u);
    EXPECT_EQ(made[i].device_fractions[0], (std::pair<int, Amount>{0, 3000}));
  }
  EXPECT_EQ(cs.pending_count(), 1u);
  EXPECT_EQ(cs.pending(DemandKind::Actor).at(0)->id, ids[3]);
  EXPECT_EQ(cs.placement(ids[3]), nullptr);
  EXPECT_EQ(dev(n, 0).fraction_booked, 9000);
  EXPECT_EQ(cs.node(n)->available.get_amount(kGPU), 1000);
  EXPECT_TRUE(cs.schedule_pending().empty()) << "still does not fit";
}

TEST_F(ClusterStateTest, FractionalFourthGoesToTheSecondDevice) {
  const NodeId n = cs.add_node(gpu_node(2), 0);
  for (int i = 0; i < 4; ++i) actor(gpu(0.3));
  auto made = cs.schedule_pending();
  ASSERT_EQ(made.size(), 4u);
  EXPECT_EQ(made[0].devices, (std::vector<int>{0}));
  EXPECT_EQ(made[1].devices, (std::vector<int>{0}));
  EXPECT_EQ(made[2].devices, (std::vector<int>{0}));
  EXPECT_EQ(made[3].devices, (std::vector<int>{1}));
  EXPECT_EQ(dev(n, 0).fraction_booked, 9000);
  EXPECT_EQ(dev(n, 1).fraction_booked, 3000);
  EXPECT_EQ(cs.pending_count(), 0u);
}

TEST_F(ClusterStateTest, FractionalBestFitKeepsWholeDevicesFree) {
  const NodeId n = cs.add_node(gpu_node(3), 0);
  actor(gpu(0.3));  // device 0: 0.7 free
  cs.schedule_pending();
  auto whole = actor(gpu(1));
  cs.schedule_pending();
  EXPECT_EQ(cs.placement(whole)->devices, (std::vector<int>{1}));
  actor(gpu(0.5));  // device 1 is full; 0 (0.7 free) beats 2 (1.0 free)
  auto made = cs.schedule_pending();
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(made[0].devices, (std::vector<int>{0}));
  EXPECT_EQ(dev(n, 2).fraction_booked, 0);
}

// --- whole GPUs ----------------------------------------------------------------

TEST_F(ClusterStateTest, WholeRequestTakesWholeFreeDevices) {
  const NodeId n = cs.add_node(gpu_node(4), 0);
  actor(gpu(0.3));  // lands on device 0
  cs.schedule_pending();
  auto two = actor(gpu(2));
  auto made = cs.schedule_pending();
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(made[0].devices, (std::vector<int>{1, 2}));
  EXPECT_EQ(made[0].device_fractions,
            (std::vector<std::pair<int, Amount>>{{1, kAmountScale}, {2, kAmountScale}}));
  EXPECT_EQ(cs.placement(two)->node, n);
  EXPECT_EQ(dev(n, 1).fraction_booked, kAmountScale);
  EXPECT_EQ(dev(n, 2).fraction_booked, kAmountScale);
  EXPECT_EQ(dev(n, 3).fraction_booked, 0);
  EXPECT_DOUBLE_EQ(cs.node(n)->available.get(kGPU), 1.7);
}

TEST_F(ClusterStateTest, WholeRequestFailsWhenOnlyFractionsAreFree) {
  const NodeId n = cs.add_node(gpu_node(3), 0);
  for (int i = 0; i < 3; ++i) actor(gpu(0.6));  // one per device: 0.4 free on each
  ASSERT_EQ(cs.schedule_pending().size(), 3u);
  ASSERT_DOUBLE_EQ(cs.node(n)->available.get(kGPU), 1.2);  // node-level sum would allow it
  auto whole = actor(gpu(1));
  EXPECT_TRUE(cs.schedule_pending().empty());
  EXPECT_EQ(cs.placement(whole), nullptr);
  EXPECT_FALSE(cs.find_fit(gpu(1)).has_value());
  EXPECT_TRUE(cs.find_fit(gpu(0.4)).has_value());
}

TEST_F(ClusterStateTest, OneAndAHalfGpusRefused) {
  cs.add_node(gpu_node(2), 0);
  auto id = actor(gpu(1.5));
  EXPECT_TRUE(cs.schedule_pending().empty());
  EXPECT_EQ(cs.pending_count(), 1u);
  EXPECT_EQ(cs.placement(id), nullptr);
  EXPECT_FALSE(cs.find_fit(gpu(1.5)).has_value());
  EXPECT_TRUE(cs.find_fit(gpu(2)).has_value());
}

TEST_F(ClusterStateTest, NoGpuRequestBindsNoDevice) {
  const NodeId n = cs.add_node(gpu_node(1), 0);
  actor(ResourceSet{{kCPU, 2}});
  auto made = cs.schedule_pending();
  ASSERT_EQ(made.size(), 1u);
  EXPECT_TRUE(made[0].devices.empty());
  EXPECT_EQ(made[0].vram_device, -1);
  EXPECT_EQ(cs.node(n)->available.get(kCPU), 6.0);
  EXPECT_EQ(dev(n, 0).fraction_booked, 0);
}

// --- VRAM_MB -------------------------------------------------------------------

TEST_F(ClusterStateTest, NodeLevelVramCanOverbookADevice) {
  const NodeId n = cs.add_node(gpu_node(2), 0);
  ASSERT_EQ(cs.node(n)->total().get(kVramMB), 2.0 * kDeviceMB);
  auto big = actor(ResourceSet{{kGPU, 0.01}, {kVramMB, 30000}});
  auto made = cs.schedule_pending();
  ASSERT_EQ(made.size(), 1u) << "the node-level sum suffices for Ray";
  const Placement& p = made[0];
  EXPECT_EQ(p.demand, big);
  EXPECT_EQ(p.vram_mb, 30000);
  EXPECT_EQ(p.vram_device, 0);
  EXPECT_TRUE(p.device_overbooked) << "no single 24576 MB device holds 30000 MB";
  EXPECT_EQ(dev(n, 0).vram_booked_mb, 30000);
  EXPECT_EQ(cs.node(n)->available.get(kVramMB), 2.0 * kDeviceMB - 30000);
}

TEST_F(ClusterStateTest, VramWithinOneDeviceIsNotOverbooked) {
  const NodeId n = cs.add_node(gpu_node(2), 0);
  actor(ResourceSet{{kGPU, 0.5}, {kVramMB, 12000}});
  actor(ResourceSet{{kGPU, 0.5}, {kVramMB, 12000}});
  auto made = cs.schedule_pending();
  ASSERT_EQ(made.size(), 2u);
  EXPECT_FALSE(made[0].device_overbooked);
  EXPECT_FALSE(made[1].device_overbooked);
  EXPECT_EQ(made[1].devices, (std::vector<int>{0}));
  EXPECT_EQ(dev(n, 0).vram_booked_mb, 24000);
  // A third 12000 MB on device 1 fits there; one more on device 0 would not.
  actor(ResourceSet{{kGPU, 0.5}, {kVramMB, 12000}});
  made = cs.schedule_pending();
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(made[0].devices, (std::vector<int>{1}));
  EXPECT_FALSE(made[0].device_overbooked);
}

TEST_F(ClusterStateTest, NodeLevelVramIsAHardLimit) {
  cs.add_node(gpu_node(2), 0);
  actor(ResourceSet{{kGPU, 0.01}, {kVramMB, 30000}});
  auto second = actor(ResourceSet{{kGPU, 0.01}, {kVramMB, 30000}});
  EXPECT_EQ(cs.schedule_pending().size(), 1u);
  EXPECT_EQ(cs.placement(second), nullptr);
}

// --- scheduling order and custom resources --------------------------------------

TEST_F(ClusterStateTest, SchedulePendingPlacesOldestFirst) {
  cs.add_node(gpu_node(1), 0);
  auto a = actor(gpu(0.6), "a");
  auto b = actor(gpu(0.6), "b");  // does not fit after a
  auto c = actor(gpu(0.3), "c");  // fits beside a
  auto made = cs.schedule_pending();
  ASSERT_EQ(made.size(), 2u);
  EXPECT_EQ(made[0].demand, a);
  EXPECT_EQ(made[1].demand, c);
  auto pend = cs.pending(DemandKind::Actor);
  ASSERT_EQ(pend.size(), 1u);
  EXPECT_EQ(pend[0]->id, b);
  EXPECT_EQ(pend[0]->label, "b");
}

TEST_F(ClusterStateTest, CompetingDemandsGoToTheOlder) {
  cs.add_node(gpu_node(1), 0);
  auto older = cs.submit(DemandKind::Task, "x", "older", gpu(0.7), 5);
  auto newer = cs.submit(DemandKind::Actor, "y", "newer", gpu(0.7), 6);
  auto made = cs.schedule_pending();
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(made[0].demand, older);
  EXPECT_NE(cs.placement(older), nullptr);
  EXPECT_EQ(cs.placement(newer), nullptr);
}

TEST_F(ClusterStateTest, NodesAreTriedInRegistrationOrder) {
  const NodeId a = cs.add_node(gpu_node(1), 0);
  const NodeId b = cs.add_node(gpu_node(1), 0);
  actor(gpu(0.5));
  actor(gpu(0.5));
  actor(gpu(0.5));
  auto made = cs.schedule_pending();
  ASSERT_EQ(made.size(), 3u);
  EXPECT_EQ(made[0].node, a);
  EXPECT_EQ(made[1].node, a);
  EXPECT_EQ(made[2].node, b);
}

TEST_F(ClusterStateTest, CustomResourcePinsToItsNode) {
  cs.add_node(gpu_node(1, "100"), 0);
  const NodeId b = cs.add_node(gpu_node(1, "200"), 0);
  ResourceSet req{{kCPU, 1}};
  req.set(slurm_job_resource("200"), 0.001);
  auto id = actor(req);
  cs.schedule_pending();
  ASSERT_NE(cs.placement(id), nullptr);
  EXPECT_EQ(cs.placement(id)->node, b);
  ResourceSet nowhere{{kCPU, 1}};
  nowhere.set(slurm_job_resource("300"), 0.001);
  EXPECT_FALSE(cs.find_fit(nowhere).has_value());
}

TEST_F(ClusterStateTest, FindFitBooksNothing) {
  const NodeId n = cs.add_node(gpu_node(1), 0);
  auto p = cs.find_fit(gpu(0.5));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->node, n);
  EXPECT_EQ(dev(n, 0).fraction_booked, 0);
  EXPECT_TRUE(cs.node(n)->available == cs.node(n)->total());
}

TEST_F(ClusterStateTest, PendingListsPerKind) {
  auto a1 = cs.submit(DemandKind::Actor, "app", "replica app#0", gpu(1), 1);
  auto t1 = cs.submit(DemandKind::Task, "app", "introspection app", ResourceSet{{kCPU, 1}}, 2);
  auto j1 = cs.submit(DemandKind::Job, "driver", "job", ResourceSet{{kCPU, 1}}, 3);
  auto a2 = cs.submit(DemandKind::Actor, "app", "replica app#1", gpu(1), 4);
  EXPECT_EQ(cs.pending_count(), 4u);
  auto actors = cs.pending(DemandKind::Actor);
  ASSERT_EQ(actors.size(), 2u);
  EXPECT_EQ(actors[0]->id, a1);
  EXPECT_EQ(actors[1]->id, a2);
  EXPECT_EQ(actors[1]->created, 4);
  ASSERT_EQ(cs.pending(DemandKind::Task).size(), 1u);
  EXPECT_EQ(cs.pending(DemandKind::Task)[0]->id, t1);
  ASSERT_EQ(cs.pending(DemandKind::Job).size(), 1u);
  EXPECT_EQ(cs.pending(DemandKind::Job)[0]->id, j1);
  EXPECT_EQ(cs.demand(a1)->owner, "app");
  EXPECT_EQ(cs.demand(a1)->label, "replica app#0");
  EXPECT_STREQ(name(DemandKind::Actor), "actors");
  EXPECT_STREQ(name(DemandKind::Task), "tasks");
  EXPECT_STREQ(name(DemandKind::Job), "jobs");
}

// --- withdraw and node removal ----------------------------------------------------

TEST_F(ClusterStateTest, WithdrawPending) {
  auto id = actor(gpu(1));
  EXPECT_TRUE(cs.withdraw(id));
  EXPECT_EQ(cs.pending_count(), 0u);
  EXPECT_EQ(cs.demand(id), nullptr);
  EXPECT_FALSE(cs.withdraw(id));
  EXPECT_FALSE(cs.withdraw(12345));
}

TEST_F(ClusterStateTest, WithdrawPlacedReleasesNodeAndDevice) {
  const NodeId n = cs.add_node(gpu_node(1), 0);
  auto a = actor(ResourceSet{{kCPU, 2}, {kGPU, 0.6}, {kVramMB, 10000}});
  auto b = actor(gpu(0.6));
  cs.schedule_pending();
  ASSERT_NE(cs.placement(a), nullptr);
  ASSERT_EQ(cs.placement(b), nullptr);
  EXPECT_TRUE(cs.withdraw(a));
  EXPECT_EQ(cs.placement(a), nullptr);
  EXPECT_EQ(cs.demand(a), nullptr);
  EXPECT_TRUE(cs.node(n)->available == cs.node(n)->total());
  EXPECT_EQ(dev(n, 0).fraction_booked, 0);
  EXPECT_EQ(dev(n, 0).vram_booked_mb, 0);
  auto made = cs.schedule_pending();
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(made[0].demand, b);
}

TEST_F(ClusterStateTest, RemoveNodeReturnsItsDemandsAndFreesNothingElse) {
  const NodeId a = cs.add_node(gpu_node(1, "100"), 0);
  const NodeId b = cs.add_node(gpu_node(1, "200"), 0);
  auto on_a1 = actor(gpu(0.6));
  auto on_a2 = actor(gpu(0.3));
  auto on_b = actor(gpu(0.6));
  auto pending = actor(gpu(0.6));
  ASSERT_EQ(cs.schedule_pending().size(), 3u);
  ASSERT_EQ(cs.placement(on_b)->node, b);
  const ResourceSet b_available = cs.node(b)->available;

  std::vector<DemandId> lost;
  for (const Demand& d : cs.remove_node(a)) {
    lost.push_back(d.id);
    // The lost demand keeps its request, so the caller can resubmit it.
    EXPECT_EQ(d.request.get(kGPU), d.id == on_a1 ? 0.6 : 0.3);
  }
  std::sort(lost.begin(), lost.end());
  EXPECT_EQ(lost, (std::vector<DemandId>{on_a1, on_a2}));
  EXPECT_EQ(cs.placement(on_a1), nullptr);
  EXPECT_EQ(cs.placement(on_a2), nullptr);
  // The other node, its placement and the pending queue are untouched.
  EXPECT_NE(cs.placement(on_b), nullptr);
  EXPECT_TRUE(cs.node(b)->available == b_available);
  EXPECT_EQ(cs.pending_count(), 1u);
  EXPECT_EQ(cs.pending(DemandKind::Actor)[0]->id, pending);
  // The dead node stays for history but takes nothing.
  ASSERT_NE(cs.node(a), nullptr);
  EXPECT_FALSE(cs.node(a)->alive());
  EXPECT_EQ(cs.node(a)->life.state(), NodeState::Dead);
  EXPECT_EQ(cs.alive_nodes().size(), 1u);
  EXPECT_TRUE(cs.schedule_pending().empty());
  auto fit = cs.find_fit(gpu(0.1));
  ASSERT_TRUE(fit.has_value());
  EXPECT_EQ(fit->node, b);
  // Lost demands are gone; a second removal is a no-op.
  EXPECT_FALSE(cs.withdraw(on_a1));
  EXPECT_TRUE(cs.remove_node(a).empty());
  EXPECT_TRUE(cs.remove_node("node-99").empty());
  // Withdrawing the survivor still releases its node.
  EXPECT_TRUE(cs.withdraw(on_b));
  EXPECT_TRUE(cs.node(b)->available == cs.node(b)->total());
}

TEST_F(ClusterStateTest, ObserveDeviceMemory) {
  const NodeId n = cs.add_node(gpu_node(2), 0);
  EXPECT_FALSE(dev(n, 1).observed_used_bytes.has_value());
  cs.observe_device_memory(n, 1, 123456789, 42);
  EXPECT_EQ(dev(n, 1).observed_used_bytes, 123456789);
  EXPECT_EQ(dev(n, 1).observed_at, 42);
  // Unknown node or device: ignored.
  cs.observe_device_memory(n, 2, 1, 43);
  cs.observe_device_memory(n, -1, 1, 43);
  cs.observe_device_memory("node-99", 0, 1, 43);
  EXPECT_FALSE(dev(n, 0).observed_used_bytes.has_value());
}


TEST_F(ClusterStateTest, GpuMemoryReportKeepsTheLastPush) {
  const NodeId a = cs.add_node(gpu_node(2), 0);
  EXPECT_FALSE(cs.node(a)->gpu_memory_report.has_value());
  cs.report_gpu_memory(a, 500, 10);
  cs.report_gpu_memory(a, 300, 12);
  ASSERT_TRUE(cs.node(a)->gpu_memory_report.has_value());
  EXPECT_EQ(cs.node(a)->gpu_memory_report->used_bytes, 300);
  EXPECT_EQ(cs.node(a)->gpu_memory_report->at, 12);
  EXPECT_FALSE(dev(a, 0).observed_used_bytes.has_value()) << "a push is the node's, not a device reading";
  cs.report_gpu_memory("node-99", 7, 13);  // unknown: ignored
}

TEST_F(ClusterStateTest, BlockedShapeRetriesOnlyWhenCapacityGrows) {
  const NodeId n = cs.add_node(gpu_node(1), 0);
  const DemandId big = actor(gpu(0.6));
  const DemandId big2 = actor(gpu(0.6));
  const DemandId small = actor(gpu(0.3));
  auto made = cs.schedule_pending();
  ASSERT_EQ(made.size(), 2u);
  EXPECT_EQ(made[0].demand, big);
  EXPECT_EQ(made[1].demand, small) << "a later, smaller shape still fits after the larger one blocked";
  const DemandId big3 = actor(gpu(0.6));
  EXPECT_TRUE(cs.schedule_pending().empty());
  EXPECT_TRUE(cs.withdraw(small));  // capacity grew, but only to 0.4 free
  EXPECT_TRUE(cs.schedule_pending().empty());
  EXPECT_TRUE(cs.withdraw(big));
  made = cs.schedule_pending();
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(made[0].demand, big2) << "oldest first once capacity grew";
  const NodeId m = cs.add_node(gpu_node(1), 1);
  made = cs.schedule_pending();
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(made[0].demand, big3);
  EXPECT_EQ(made[0].node, m) << "a node registering unblocks the shape";
  EXPECT_EQ(cs.pending_count(), 0u);
  (void)n;
}
}  // namespace
}  // namespace vramsim

namespace vramsim {
namespace {

// The fit tree against a scan, through random updates that raise, lower and
// repeat keys (a set that leaves an ancestor's maxima unchanged stops there).
TEST(FitIndex, FindAgreesWithAScanThroughRandomUpdates) {
  std::mt19937 gen(7);
  constexpr std::size_t kLeaves = 300;
  std::vector<FitIndex::Key> keys(kLeaves);
  FitIndex index;
  auto random_key = [&] {
    FitIndex::Key k;
    for (auto& v : k) v = static_cast<Amount>(gen() % 4);
    return k;
  };
  for (std::size_t i = 0; i < kLeaves; ++i) index.set(i, keys[i] = random_key());
  for (int step = 0; step < 4000; ++step) {
    const std::size_t i = gen() % kLeaves;
    keys[i] = step % 3 == 0 ? keys[i] : random_key();
    index.set(i, keys[i]);
    const FitIndex::Key needs = random_key();
    const std::size_t from = gen() % (kLeaves + 10);
    long expected = -1;
    for (std::size_t j = from; j < kLeaves && expected < 0; ++j) {
      bool fits = true;
      for (int d = 0; d < FitIndex::kDims; ++d) fits = fits && keys[j][static_cast<std::size_t>(d)] >= needs[static_cast<std::size_t>(d)];
      if (fits) expected = static_cast<long>(j);
    }
    ASSERT_EQ(index.find(from, needs), expected) << "step " << step;
  }
}

}  // namespace
}  // namespace vramsim
