// Which actors are pending demand (models/pending.hpp): the fifth defect.
// Ray lists an actor PENDING_CREATION from registration until its creation
// task returns, so a replica placed on a node and still installing its
// runtime env is listed by ProxyActor._get_pending_actors
// (proxy_actor.py:251-290@1725d5c) in both legacy and fixed BioEngine.
#include "models/pending.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "models/autoscaler.hpp"
#include "models/policy_set.hpp"
#include "models/registry.hpp"

namespace vramsim {
namespace {

std::shared_ptr<const PendingPolicy> pending(const std::string& variant) {
  return PolicyRegistry::instance().make<PendingPolicy>(variant);
}

NodeSpec a100_worker(const std::string& job) {
  NodeSpec s;
  s.ip = "10.0.0.1";
  s.slurm_job_id = job;
  s.accelerator_type = "A100";
  s.resources = ResourceSet{{kCPU, 16}, {kGPU, 1}, {kMemory, 512.0 * kGiB}, {kVramMB, 40960}};
  s.resources.set(slurm_job_resource(job), 1);
  s.devices.push_back(GpuDevice{0, "NVIDIA A100-SXM4-40GB", 40960, 0, 0, {}, 0});
  return s;
}

const ResourceSet kReplica{{kCPU, 1}, {kGPU, 0.01}, {kVramMB, 8000}};

std::vector<ResourceSet> listed(const RequestList& l) {
  std::vector<ResourceSet> out;
  l.for_each([&out](const ResourceSet& r) { out.push_back(r); });
  return out;
}

// --- the engine's record of actors in creation ----------------------------------------------

TEST(InCreation, APlacedActorIsInCreationUntilItsConstructorReturns) {
  ClusterState cs;
  cs.add_node(a100_worker("1"), 0);
  const DemandId replica = cs.submit(DemandKind::Actor, "app", "app#0", kReplica, 0);
  const DemandId task = cs.submit(DemandKind::Task, "app", "task", ResourceSet{{kCPU, 1}}, 0);
  EXPECT_TRUE(cs.in_creation().empty()) << "pending for a node is not yet in creation";
  ASSERT_EQ(cs.schedule_pending().size(), 2u);
  EXPECT_TRUE(cs.pending_queue(DemandKind::Actor).empty());
  ASSERT_EQ(cs.in_creation().size(), 1u) << "the actor, not the task: a placed task is running";
  EXPECT_EQ(cs.in_creation().begin()->first, replica);
  EXPECT_TRUE(cs.actor_created(replica));
  EXPECT_TRUE(cs.in_creation().empty());
  EXPECT_FALSE(cs.actor_created(replica)) << "created once";
  EXPECT_FALSE(cs.actor_created(task));
}

TEST(InCreation, AWithdrawnOrLostActorLeavesIt) {
  ClusterState cs;
  const NodeId n = cs.add_node(a100_worker("1"), 0);
  const DemandId a = cs.submit(DemandKind::Actor, "app", "app#0", kReplica, 0);
  const DemandId b = cs.submit(DemandKind::Actor, "app", "app#1", kReplica, 0);
  cs.schedule_pending();
  ASSERT_EQ(cs.in_creation().size(), 2u);
  EXPECT_TRUE(cs.withdraw(a));
  ASSERT_EQ(cs.in_creation().size(), 1u);
  EXPECT_EQ(cs.in_creation().begin()->first, b);
  const auto lost = cs.remove_node(n);
  EXPECT_EQ(lost.size(), 1u);
  EXPECT_TRUE(cs.in_creation().empty()) << "the node's loss ends the creation";
}

// --- the merged view --------------------------------------------------------------------------

// Two queues read as one list in submission order, as a copy sorted by
// demand id would be; the newest entry that matches is the one a walk from
// the end of that copy meets first.
TEST(RequestList, TwoQueuesMergeInSubmissionOrder) {
  ClusterState cs;
  cs.add_node(a100_worker("1"), 0);
  // ids 1..6: 1, 3 and 5 are placed (in creation), 2, 4, 6 wait (they ask
  // for more than the node has, so they stay pending).
  std::vector<ResourceSet> by_id;
  for (int i = 1; i <= 6; ++i) {
    const ResourceSet r = i % 2 ? ResourceSet{{kCPU, static_cast<double>(i)}, {kGPU, 0.01}}
                                : ResourceSet{{kCPU, 100.0 + i}};
    by_id.push_back(r);
    cs.submit(DemandKind::Actor, "app", "r" + std::to_string(i), r, 0);
    cs.schedule_pending();
  }
  ASSERT_EQ(cs.in_creation().size(), 3u);
  ASSERT_EQ(cs.pending_queue(DemandKind::Actor).size(), 3u);
  const RequestList both = RequestList::view(cs.pending_queue(DemandKind::Actor), &cs.in_creation());
  EXPECT_EQ(both.size(), 6u);
  const auto got = listed(both);
  ASSERT_EQ(got.size(), by_id.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i] == by_id[i]) << "entry " << i;
  // Newest first: id 6 waits, id 5 is in creation.
  EXPECT_TRUE(*both.find_newest([](const ResourceSet&) { return true; }) == by_id[5]);
  EXPECT_TRUE(*both.find_newest([](const ResourceSet& r) { return r.has(kGPUId); }) == by_id[4]);
  EXPECT_TRUE(*both.find_newest([](const ResourceSet& r) { return r.get(kCPU) < 2; }) == by_id[0]);
  // Appending copies the merged list in the same order.
  RequestList copy = both;
  copy.push_back(ResourceSet{{kCPU, 9}});
  const auto copied = listed(copy);
  ASSERT_EQ(copied.size(), 7u);
  for (std::size_t i = 0; i < by_id.size(); ++i) EXPECT_TRUE(copied[i] == by_id[i]) << "entry " << i;
}

// --- the variants ----------------------------------------------------------------------------

TEST(PendingVariants, CountsInstallingListsThePlacedReplicaExcludesInstallingDoesNot) {
  ClusterState cs;
  cs.add_node(a100_worker("1"), 0);
  cs.submit(DemandKind::Actor, "app", "app#0", kReplica, 0);
  cs.schedule_pending();
  const auto& waiting = cs.pending_queue(DemandKind::Actor);
  ASSERT_TRUE(waiting.empty());
  const auto counted = listed(pending("counts-installing")->actors(waiting, cs.in_creation()));
  ASSERT_EQ(counted.size(), 1u);
  EXPECT_TRUE(counted[0] == kReplica);
  EXPECT_TRUE(pending("excludes-installing")->actors(waiting, cs.in_creation()).empty());
}

TEST(PendingVariants, BothPresetsCountInstallingAndAMixRepairsIt) {
  for (const char* preset : {"legacy", "fixed"}) {
    const PolicySet p = parse_policy_spec(preset);
    ASSERT_TRUE(p.pending);
    EXPECT_EQ(p.names.count("pending"), 0u) << "not named unless a mix names it";
    ClusterState cs;
    cs.add_node(a100_worker("1"), 0);
    cs.submit(DemandKind::Actor, "app", "app#0", kReplica, 0);
    cs.schedule_pending();
    EXPECT_EQ(p.pending->actors(cs.pending_queue(DemandKind::Actor), cs.in_creation()).size(), 1u) << preset;
  }
  const PolicySet mix = parse_policy_spec("fixed,pending=excludes-installing");
  EXPECT_EQ(mix.names.at("pending"), "excludes-installing");
  EXPECT_EQ(mix.label, "fixed,pending=excludes-installing");
  EXPECT_THROW(parse_policy_spec("fixed,pending=sometimes"), UnknownPolicyError);
}

// What the autoscaler does with the listed replica, hand-worked from
// slurm_workers.py@14b9f29 (fixed): one pending actor {CPU 1, GPU 0.01,
// VRAM_MB 8000}, the cooldown over and 1 of 4 jobs: a scale-up, its GPU
// raised to 1 (VRAM_MB with GPU < 1) and its CPUs to the default 16. With
// the replica excluded nothing is pending, and the scale-down check runs.
TEST(PendingVariants, TheInstallingReplicaScalesUpUnderFixedOnlyWhenCounted) {
  ClusterState cs;
  cs.add_node(a100_worker("1"), 0);
  cs.submit(DemandKind::Actor, "app", "app#0", kReplica, 0);
  cs.schedule_pending();
  AutoscalerConfig cfg;
  cfg.defaults.cpus = 16;
  const auto fixed = PolicyRegistry::instance().make<AutoscalerPolicy>("fixed");
  IdleHistory history;
  for (const char* variant : {"counts-installing", "excludes-installing"}) {
    AutoscalerSnapshot s;
    s.now = 80 * kSecond;
    s.last_scale_up = 10 * kSecond;
    s.worker_jobs = 1;
    s.history = &history;
    s.actors = pending(variant)->actors(cs.pending_queue(DemandKind::Actor), cs.in_creation());
    const ScaleDecision d = fixed->decide(s, cfg);
    if (std::string(variant) == "counts-installing") {
      ASSERT_EQ(d.action, ScaleDecision::Action::ScaleUp);
      EXPECT_EQ(d.job.gpus, 1);
      EXPECT_EQ(d.job.cpus, 16);
      EXPECT_TRUE(d.demand == kReplica);
      EXPECT_FALSE(d.scale_down_checked);
    } else {
      EXPECT_NE(d.action, ScaleDecision::Action::ScaleUp);
      EXPECT_TRUE(d.scale_down_checked) << "nothing pending: the scale-down check runs";
    }
  }
}

}  // namespace
}  // namespace vramsim
