#include "models/admission.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "models/registry.hpp"

namespace vramsim {
namespace {

std::shared_ptr<const AdmissionPolicy> admission(const std::string& variant) {
  return PolicyRegistry::instance().make<AdmissionPolicy>(variant);
}

// One replica of an 8000 MB app sized on the VRAM branch.
const AppDemand kApp{"app", 1, 0.01, 0, 8000};
// As manager.py raises it with _sum_resources' four keys (builder.py:383-406
// @fba5ffe): legacy int()s every total (0.01 GPU reads 0); fixed keeps
// num_gpus a float (840e77d).
std::string rejection(const std::string& variant) {
  return variant == "legacy"
             ? "Insufficient resources for application 'app'. Requested: {'num_cpus': 1, 'num_gpus': 0, 'memory': 0, "
               "'VRAM_MB': 8000}"
             : "Insufficient resources for application 'app'. Requested: {'num_cpus': 1, 'num_gpus': 0.01, 'memory': 0, "
               "'VRAM_MB': 8000}";
}

NodeHeadroom worker(double cpu, double gpu, double mem_gib, std::string id = "node-1") {
  return NodeHeadroom{std::move(id), false, cpu, gpu, mem_gib * kGiB};
}

AdmissionSnapshot snapshot(int worker_jobs, int unregistered, int max_workers = 1) {
  AdmissionSnapshot s;
  s.worker_jobs = worker_jobs;
  s.unregistered_jobs = unregistered;
  s.max_workers = max_workers;
  return s;
}

class AdmissionBothVariants : public ::testing::TestWithParam<std::string> {
 protected:
  std::shared_ptr<const AdmissionPolicy> p = admission(GetParam());
};

INSTANTIATE_TEST_SUITE_P(Variants, AdmissionBothVariants, ::testing::Values("legacy", "fixed"));

// --- the four reference cases ---------------------------------------------------------

TEST_P(AdmissionBothVariants, EmptyClusterAdmitsBecauseAWorkerCanBeSpawned) {
  const auto d = p->check(kApp, snapshot(0, 0));
  EXPECT_TRUE(d.admitted);
  EXPECT_EQ(d.reason, "can_spawn_worker");
  EXPECT_TRUE(d.message.empty());
}

TEST(Admission, LegacyRejectsWhileTheOnlyJobIsInFlight) {
  const auto d = admission("legacy")->check(kApp, snapshot(1, 1));
  EXPECT_FALSE(d.admitted);
  EXPECT_EQ(d.reason, "insufficient");
  EXPECT_EQ(d.message, rejection("legacy"));
}

TEST(Admission, FixedAdmitsOnCapacityInFlight) {
  const auto d = admission("fixed")->check(kApp, snapshot(1, 1));
  EXPECT_TRUE(d.admitted);
  EXPECT_EQ(d.reason, "capacity_in_flight");
  EXPECT_TRUE(d.message.empty());
}

TEST_P(AdmissionBothVariants, NodeWithRoomAdmits) {
  auto s = snapshot(1, 0);
  s.nodes.push_back(worker(8, 1, 128));
  const auto d = p->check(kApp, s);
  EXPECT_TRUE(d.admitted);
  EXPECT_EQ(d.reason, "node_with_room");
}

TEST_P(AdmissionBothVariants, FullClusterRejectsOversizedRequest) {
  auto s = snapshot(1, 0);
  s.nodes.push_back(worker(0, 0, 0));
  const AppDemand big{"big", 16, 2, 0, 0};
  const auto d = p->check(big, s);
  EXPECT_FALSE(d.admitted);
  EXPECT_EQ(d.message, GetParam() == "legacy" ? "Insufficient resources for application 'big'. Requested: {'num_cpus': "
                                                "16, 'num_gpus': 2, 'memory': 0, 'VRAM_MB': 0}"
                                              : "Insufficient resources for application 'big'. Requested: {'num_cpus': "
                                                "16, 'num_gpus': 2.0, 'memory': 0, 'VRAM_MB': 0}");
}

// --- around the cases ---------------------------------------------------------------------

TEST_P(AdmissionBothVariants, RejectionMessageIsExact) {
  auto s = snapshot(1, 0);
  s.nodes.push_back(worker(0, 0, 0));
  EXPECT_EQ(p->check(kApp, s).message, rejection(GetParam()));
}

TEST_P(AdmissionBothVariants, HeadNodeNeverCountsAsRoom) {
  auto s = snapshot(1, 0);
  s.nodes.push_back(NodeHeadroom{"head", true, 64, 4, 512 * kGiB});
  const auto d = p->check(kApp, s);
  EXPECT_FALSE(d.admitted);
  EXPECT_EQ(d.message, rejection(GetParam()));
}

TEST_P(AdmissionBothVariants, NodeWithoutRoomForEveryResourceDoesNotCount) {
  for (const auto& n : {worker(0.5, 1, 128), worker(8, 0, 128), worker(8, 1, 0.5)}) {
    auto s = snapshot(1, 0);
    s.nodes.push_back(n);
    const AppDemand mem_app{"app", 1, 0.01, 1 * kGiB};
    EXPECT_FALSE(p->check(mem_app, s).admitted) << n.free_cpu << " " << n.free_gpu << " " << n.free_memory;
  }
}

TEST_P(AdmissionBothVariants, RoomOnAnyOneNodeIsEnough) {
  auto s = snapshot(2, 0, 2);
  s.nodes.push_back(worker(0, 0, 0, "node-1"));
  s.nodes.push_back(worker(4, 1, 64, "node-2"));
  EXPECT_EQ(p->check(kApp, s).reason, "node_with_room");
}

// An openb pod's gpu_spec is a custom resource only nodes of the named
// models offer: a node has room for the pod only if it offers it. Node 1 has
// room but is of another model; node 2 is a T4 without a free GPU. Both
// variants reject until node 3, a T4 with room, registers; a pod naming no
// model is admitted on node 1.
TEST_P(AdmissionBothVariants, NodeWithRoomMustOfferTheCustomResourcesAsked) {
  ResourceSet t4;  // the free custom resources of a T4 node
  t4.set("accelerator_type:T4", 1);
  auto s = snapshot(1, 0);
  s.nodes.push_back(worker(8, 1, 64, "node-1"));
  NodeHeadroom full = worker(8, 0, 64, "node-2");
  full.available = &t4;
  s.nodes.push_back(full);
  AppDemand pod = kApp;
  pod.custom["accelerator_type:T4"] = 0.001;
  const auto d = p->check(pod, s);
  EXPECT_FALSE(d.admitted);
  EXPECT_EQ(d.reason, "insufficient");
  EXPECT_EQ(p->check(kApp, s).reason, "node_with_room");
  NodeHeadroom roomy = worker(8, 1, 64, "node-3");
  roomy.available = &t4;
  s.nodes.push_back(roomy);
  EXPECT_EQ(p->check(pod, s).reason, "node_with_room");
  // Asking more of the resource than the node has free is no room either.
  pod.custom["accelerator_type:T4"] = 2;
  EXPECT_FALSE(p->check(pod, s).admitted);
}

TEST_P(AdmissionBothVariants, SpawningRequiresTheDefaultsToFit) {
  const auto s = snapshot(0, 0);
  EXPECT_FALSE(p->check(AppDemand{"app", 9, 0, 0, 0}, s).admitted) << "more CPUs than the default 8";
  EXPECT_FALSE(p->check(AppDemand{"app", 1, 2, 0, 0}, s).admitted) << "more GPUs than the default 1";
  EXPECT_FALSE(p->check(AppDemand{"app", 1, 0, 128 * kGiB + 1, 0}, s).admitted)
      << "more memory than 8 x 16 GiB";
  EXPECT_TRUE(p->check(AppDemand{"app", 8, 1, 128 * kGiB, 0}, s).admitted) << "exactly the defaults";
}

TEST(Admission, FixedCapacityInFlightStillRequiresTheDefaultsToFit) {
  const auto d = admission("fixed")->check(AppDemand{"app", 1, 2, 0, 0}, snapshot(1, 1));
  EXPECT_FALSE(d.admitted);
  EXPECT_EQ(d.reason, "insufficient");
}

TEST(Admission, FixedWithAllJobsRegisteredAndNoRoomRejects) {
  // Registered jobs are not capacity in flight: their nodes were scanned.
  auto s = snapshot(1, 0);
  s.nodes.push_back(worker(0, 0, 0));
  EXPECT_FALSE(admission("fixed")->check(kApp, s).admitted);
}

TEST(Admission, LegacyRejectsAtMaxWorkersWithLargerPool) {
  // max_workers=2 with two jobs in flight: the window narrows but stays open.
  EXPECT_FALSE(admission("legacy")->check(kApp, snapshot(2, 2, 2)).admitted);
  EXPECT_TRUE(admission("legacy")->check(kApp, snapshot(1, 1, 2)).admitted);
  EXPECT_EQ(admission("fixed")->check(kApp, snapshot(2, 2, 2)).reason, "capacity_in_flight");
}

TEST_P(AdmissionBothVariants, StaticModeNeverSpawns) {
  auto s = snapshot(0, 0);
  s.slurm_mode = false;
  EXPECT_FALSE(p->check(kApp, s).admitted);
  s.unregistered_jobs = 1;
  EXPECT_FALSE(p->check(kApp, s).admitted);
}

// An update (manager.py:383-421@fba5ffe): used = max(0, used - current)
// on every node, free = max(0, total - used), so free + current capped at
// the total. Hand-worked on 8-CPU nodes: 2 free + 6 back = 8 >= 7; a node
// never holding the app gets the add-back as well (the check does not ask
// where the app runs); the cap keeps a 4-CPU node at 4.
TEST_P(AdmissionBothVariants, AnUpdateAddsItsAdmittedResourcesBackOnEveryNodeUpToItsTotal) {
  const AppDemand seven{"app", 7, 0, 0, 0};
  auto node = [](double free_cpu, double total_cpu, std::string id) {
    NodeHeadroom n = worker(free_cpu, 1, 64, std::move(id));
    n.total_cpu = total_cpu;
    n.total_gpu = 1;
    n.total_memory = 64 * kGiB;
    return n;
  };
  AdmissionSnapshot s = snapshot(1, 0);
  s.nodes.push_back(node(2, 8, "node-1"));
  EXPECT_EQ(p->check(seven, s).reason, "insufficient") << "no update: 2 free";
  s.add_back = AppResources{6, 0, 0};
  EXPECT_EQ(p->check(seven, s).reason, "node_with_room") << "2 + 6 = 8 free";
  s.add_back = AppResources{4, 0, 0};
  EXPECT_EQ(p->check(seven, s).reason, "insufficient") << "2 + 4 = 6 free";

  AdmissionSnapshot other = snapshot(1, 0);  // the app's node left; another app fills node-2
  other.nodes.push_back(node(1, 8, "node-2"));
  other.add_back = AppResources{6, 0, 0};
  EXPECT_EQ(p->check(seven, other).reason, "node_with_room") << "1 + 6 on a node the app never ran on";

  AdmissionSnapshot small = snapshot(1, 0);
  small.nodes.push_back(node(0, 4, "node-3"));
  small.add_back = AppResources{6, 0, 0};
  EXPECT_EQ(p->check(AppDemand{"app", 5, 0, 0, 0}, small).reason, "insufficient") << "capped at its 4 CPUs";
  EXPECT_EQ(p->check(AppDemand{"app", 4, 0, 0, 0}, small).reason, "node_with_room");
}

TEST(Admission, SharedHelpers) {
  EXPECT_EQ(insufficient_message(kApp, RequestedDict::Fixed), rejection("fixed"));
  EXPECT_EQ(insufficient_message(kApp, RequestedDict::Legacy), rejection("legacy"));
  for (auto [x, repr] : {std::pair<double, const char*>{1, "1.0"}, {0.01, "0.01"}, {0.04, "0.04"}, {2.5, "2.5"},
                         {0, "0.0"}, {1e-5, "1e-05"}, {1e16, "1e+16"}, {123456.0, "123456.0"}, {0.1 + 0.2, "0.30000000000000004"}})
    EXPECT_EQ(python_float_repr(x), repr) << x;
  EXPECT_TRUE(defaults_fit(kApp, WorkerDefaults{}));
  AdmissionSnapshot s;
  s.nodes.push_back(worker(1, 0.01, 0));
  EXPECT_TRUE(node_has_room(kApp, s));
}

}  // namespace
}  // namespace vramsim
