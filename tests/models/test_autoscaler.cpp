#include "models/autoscaler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <random>
#include <set>
#include <ostream>
#include <string>

#include "models/registry.hpp"

namespace vramsim {

// Readable failure output; found by argument-dependent lookup.
static void PrintTo(ScaleDecision::Action a, std::ostream* os) {
  static const char* const names[] = {"None", "ScaleUp", "ScaleDown", "Error"};
  *os << names[static_cast<int>(a)];
}

namespace {

using Action = ScaleDecision::Action;

std::shared_ptr<const AutoscalerPolicy> autoscaler(const std::string& variant) {
  return PolicyRegistry::instance().make<AutoscalerPolicy>(variant);
}

constexpr SimTime kNow = 1000 * kSecond;

AutoscalerSnapshot at_now() {
  AutoscalerSnapshot s;
  s.now = kNow;
  return s;
}

// Defaults that do not mask what the request asks for.
AutoscalerConfig bare_defaults() {
  AutoscalerConfig c;
  c.defaults.cpus = 1;
  c.defaults.gpus = 0;
  c.defaults.mem_per_cpu_gb = 1;
  return c;
}

const ResourceSet kVramReplica{{kGPU, 0.01}, {kVramMB, 8000}, {kCPU, 1}};

class AutoscalerBothVariants : public ::testing::TestWithParam<std::string> {
 protected:
  std::shared_ptr<const AutoscalerPolicy> p = autoscaler(GetParam());
};

INSTANTIATE_TEST_SUITE_P(Variants, AutoscalerBothVariants, ::testing::Values("legacy", "fixed"));

// --- demand selection --------------------------------------------------------------------

TEST(SelectDemand, ActorsComeBeforeTasksAndJobs) {
  auto s = at_now();
  s.jobs = {ResourceSet{{kCPU, 4}}};
  s.tasks = {ResourceSet{{kCPU, 3}}};
  s.actors = {ResourceSet{{kCPU, 1}}, ResourceSet{{kCPU, 2}}};
  EXPECT_TRUE(select_demand(s) == (ResourceSet{{kCPU, 2}})) << "the newest actor";
}

TEST(SelectDemand, TasksComeBeforeJobsNewestFirst) {
  auto s = at_now();
  s.jobs = {ResourceSet{{kCPU, 4}}};
  s.tasks = {ResourceSet{{kCPU, 1}}, ResourceSet{{kCPU, 5}}};
  EXPECT_TRUE(select_demand(s) == (ResourceSet{{kCPU, 5}}));
  s.tasks.clear();
  s.jobs.push_back(ResourceSet{{kCPU, 6}});
  EXPECT_TRUE(select_demand(s) == (ResourceSet{{kCPU, 6}}));
}

TEST(SelectDemand, ActorsRequestingNothingAreSkipped) {
  auto s = at_now();
  s.actors = {ResourceSet{{kCPU, 2}}, ResourceSet{{"slurm_job_id:17", 1}}, ResourceSet{}};
  EXPECT_TRUE(select_demand(s) == (ResourceSet{{kCPU, 2}}));
  s.actors = {ResourceSet{}, ResourceSet{{"slurm_job_id:17", 1}}};
  s.tasks = {ResourceSet{{kCPU, 3}}};
  EXPECT_TRUE(select_demand(s) == (ResourceSet{{kCPU, 3}})) << "falls through to the tasks";
}

TEST(SelectDemand, ActorAskingOnlyForGpuOrMemoryCounts) {
  auto s = at_now();
  s.actors = {ResourceSet{{kGPU, 0.01}, {kVramMB, 8000}}};
  EXPECT_TRUE(select_demand(s) == (ResourceSet{{kGPU, 0.01}, {kVramMB, 8000}}));
  s.actors = {ResourceSet{{kMemory, kGiB}}};
  EXPECT_TRUE(select_demand(s).has_value());
}

TEST(SelectDemand, NothingPendingSelectsNothing) { EXPECT_FALSE(select_demand(at_now()).has_value()); }

TEST_P(AutoscalerBothVariants, ScaleUpSizesFromTheSelectedDemand) {
  auto s = at_now();
  s.tasks = {ResourceSet{{kCPU, 12}}};
  s.actors = {ResourceSet{{kCPU, 10}}};
  const auto d = p->decide(s, AutoscalerConfig{});
  ASSERT_EQ(d.action, Action::ScaleUp);
  EXPECT_EQ(d.job.cpus, 10);
  EXPECT_TRUE(d.demand == (ResourceSet{{kCPU, 10}}));
}

// --- gates ----------------------------------------------------------------------------------------

TEST_P(AutoscalerBothVariants, NoScaleUpWhileCreationInFlight) {
  auto s = at_now();
  s.actors = {kVramReplica};
  s.creation_in_flight = true;
  const auto d = p->decide(s, AutoscalerConfig{});
  EXPECT_EQ(d.action, Action::None);
  EXPECT_FALSE(d.scale_down_checked);
}

TEST_P(AutoscalerBothVariants, CooldownRequiresStrictlyMoreThanSixtySeconds) {
  auto s = at_now();
  s.actors = {kVramReplica};
  s.last_scale_up = kNow - 60 * kSecond;
  EXPECT_EQ(p->decide(s, AutoscalerConfig{}).action, Action::None) << "exactly 60 s";
  s.last_scale_up = kNow - 30 * kSecond;
  EXPECT_EQ(p->decide(s, AutoscalerConfig{}).action, Action::None);
  s.last_scale_up = kNow - 60 * kSecond - 1;
  EXPECT_EQ(p->decide(s, AutoscalerConfig{}).action, Action::ScaleUp) << "60 s + 1 us";
}

TEST_P(AutoscalerBothVariants, NoScaleUpAtMaxWorkers) {
  auto s = at_now();
  s.actors = {kVramReplica};
  AutoscalerConfig c;
  c.max_workers = 2;
  s.worker_jobs = 2;
  EXPECT_EQ(p->decide(s, c).action, Action::None);
  s.worker_jobs = 1;
  EXPECT_EQ(p->decide(s, c).action, Action::ScaleUp);
}

// _check_scale_up: when nothing pending states its resources (a task or job
// with none), it scales up "with defaults".
TEST_P(AutoscalerBothVariants, PendingWithoutStatedResourcesScalesUpWithDefaults) {
  auto s = at_now();
  s.tasks = {ResourceSet{}};
  const auto d = p->decide(s, AutoscalerConfig{});
  ASSERT_EQ(d.action, Action::ScaleUp) << d.note;
  EXPECT_EQ(d.note, "No pending resources with explicit requirements found; scaling up with defaults.");
  EXPECT_EQ(d.job.cpus, 8);
  EXPECT_EQ(d.job.gpus, 1);
  EXPECT_EQ(d.job.mem_per_cpu_gb, 16);
}

// --- job sizing --------------------------------------------------------------------------------------

TEST(Autoscaler, LegacyVramOnlyDemandGivesCpuOnlyJob) {
  auto s = at_now();
  s.actors = {kVramReplica};
  const auto d = autoscaler("legacy")->decide(s, bare_defaults());
  ASSERT_EQ(d.action, Action::ScaleUp);
  EXPECT_EQ(d.job.gpus, 0) << "GPU 0.01 read as 0";
}

TEST(Autoscaler, FixedVramOnlyDemandGivesOneGpuJob) {
  auto s = at_now();
  s.actors = {kVramReplica};
  const auto d = autoscaler("fixed")->decide(s, bare_defaults());
  ASSERT_EQ(d.action, Action::ScaleUp);
  EXPECT_EQ(d.job.gpus, 1);
  EXPECT_TRUE(d.demand == kVramReplica);
}

TEST(Autoscaler, FixedVramDemandWithWholeGpusKeepsTheirCount) {
  auto s = at_now();
  s.actors = {ResourceSet{{kGPU, 2}, {kVramMB, 8000}, {kCPU, 1}}};
  EXPECT_EQ(autoscaler("fixed")->decide(s, bare_defaults()).job.gpus, 2);
}

TEST_P(AutoscalerBothVariants, SmallDemandIsRaisedToTheWorkerDefaults) {
  auto s = at_now();
  s.tasks = {ResourceSet{{kCPU, 1}}};
  const auto d = p->decide(s, AutoscalerConfig{});
  ASSERT_EQ(d.action, Action::ScaleUp);
  EXPECT_EQ(d.job.cpus, 8);
  EXPECT_EQ(d.job.gpus, 1);
  EXPECT_EQ(d.job.mem_per_cpu_gb, 16);
  EXPECT_EQ(d.job.time_limit, 4 * kHour);
}

TEST_P(AutoscalerBothVariants, LargeDemandIsKept) {
  auto s = at_now();
  s.actors = {ResourceSet{{kCPU, 16}, {kGPU, 2}, {kMemory, 16 * 20 * kGiB}}};
  const auto d = p->decide(s, AutoscalerConfig{});
  ASSERT_EQ(d.action, Action::ScaleUp);
  EXPECT_EQ(d.job.cpus, 16);
  EXPECT_EQ(d.job.gpus, 2);
  EXPECT_EQ(d.job.mem_per_cpu_gb, 20);
}

// Raised to the defaults, then int() as _add_worker does: never rounded up.
TEST_P(AutoscalerBothVariants, SizesAreTruncatedAfterTheDefaults) {
  auto s = at_now();
  s.actors = {ResourceSet{{kCPU, 9.5}, {kGPU, 1.5}}};
  const auto d = p->decide(s, AutoscalerConfig{});
  ASSERT_EQ(d.action, Action::ScaleUp);
  EXPECT_EQ(d.job.cpus, 9);
  EXPECT_EQ(d.job.gpus, 1);
}

TEST_P(AutoscalerBothVariants, MemoryPerCpuIsCeilOfGigabytesOverCpus) {
  auto s = at_now();
  s.actors = {ResourceSet{{kCPU, 3}, {kMemory, 100 * kGiB}}};
  const auto d = p->decide(s, bare_defaults());
  ASSERT_EQ(d.action, Action::ScaleUp);
  EXPECT_EQ(d.job.cpus, 3);
  EXPECT_EQ(d.job.mem_per_cpu_gb, 34);  // ceil(33.3)
}

TEST_P(AutoscalerBothVariants, MissingCpuCountsAsOne) {
  auto s = at_now();
  s.actors = {ResourceSet{{kGPU, 1}, {kMemory, 10 * kGiB}}};
  const auto d = p->decide(s, bare_defaults());
  ASSERT_EQ(d.action, Action::ScaleUp);
  EXPECT_EQ(d.job.cpus, 1);
  EXPECT_EQ(d.job.mem_per_cpu_gb, 10);
}

TEST_P(AutoscalerBothVariants, JobCarriesDefaultTimeLimitAndExtraArgs) {
  auto s = at_now();
  s.tasks = {ResourceSet{{kCPU, 1}}};
  AutoscalerConfig c;
  c.defaults.time_limit = 2 * kHour;
  c.defaults.extra_sbatch_args = {"-C thin"};
  const auto d = p->decide(s, c);
  EXPECT_EQ(d.job.time_limit, 2 * kHour);
  EXPECT_EQ(d.job.extra_sbatch_args, std::vector<std::string>{"-C thin"});
}

// A pending request that states CPU: 0 (legacy divides memory by it).
TEST(Autoscaler, LegacyZeroCpuDemandRaisesZeroDivisionError) {
  auto s = at_now();
  s.actors = {ResourceSet{{kCPU, 0}, {kGPU, 1}, {kMemory, 32 * kGiB}}};
  const auto d = autoscaler("legacy")->decide(s, bare_defaults());
  EXPECT_EQ(d.action, Action::Error);
  EXPECT_NE(d.note.find("ZeroDivisionError"), std::string::npos) << d.note;
}

TEST(Autoscaler, FixedZeroCpuDemandScalesWithCpusFloored) {
  auto s = at_now();
  s.actors = {ResourceSet{{kCPU, 0}, {kGPU, 1}, {kMemory, 32 * kGiB}}};
  const auto d = autoscaler("fixed")->decide(s, bare_defaults());
  ASSERT_EQ(d.action, Action::ScaleUp);
  EXPECT_EQ(d.job.cpus, 1);
  EXPECT_EQ(d.job.gpus, 1);
  EXPECT_EQ(d.job.mem_per_cpu_gb, 32);
  EXPECT_EQ(autoscaler("fixed")->decide(s, AutoscalerConfig{}).job.cpus, 8) << "then the default floor";
}

// --- scale-down ---------------------------------------------------------------------------------------------

WorkerUsage usage(const std::string& node, double used_cpu, double used_gpu = 0, double total_gpu = 1) {
  return WorkerUsage{node, "job-" + node, 8, used_cpu, total_gpu, used_gpu};
}

// One full status sample, as the real monitor lists it.
struct StatusSample {
  SimTime t = 0;
  std::vector<WorkerUsage> workers;
};

// The history of full samples as an IdleHistory: every worker of a sample is
// reported (as changed), and one missing from a sample has left.
IdleHistory idle_history(const std::deque<StatusSample>& samples, std::size_t capacity = 100) {
  IdleHistory h(capacity);
  std::vector<std::string> present;
  for (const auto& sample : samples) {
    h.begin_sample(sample.t);
    std::vector<std::string> now;
    for (const auto& w : sample.workers) {
      h.update(w);
      now.push_back(w.node_id);
    }
    for (const auto& id : present)
      if (std::find(now.begin(), now.end(), id) == now.end()) h.remove(id);
    present = now;
  }
  return h;
}

// Samples every 10 s from `from` seconds ago up to now; `busy_at` (seconds
// ago) marks samples where node-1 is busy.
std::deque<StatusSample> history(int from_s_ago, std::vector<int> busy_at = {}) {
  std::deque<StatusSample> h;
  for (int ago = from_s_ago; ago >= 0; ago -= 10) {
    const bool busy = std::find(busy_at.begin(), busy_at.end(), ago) != busy_at.end();
    h.push_back(StatusSample{kNow - ago * kSecond, {usage("node-1", busy ? 1 : 0)}});
  }
  return h;
}

struct ScaleDownCase {
  IdleHistory h;
  AutoscalerSnapshot s;
  AutoscalerConfig c;
  ScaleDownCase(const std::deque<StatusSample>& hist) : h(idle_history(hist)), s(at_now()) {
    s.history = &h;
    s.worker_jobs = 1;
    s.last_scale_down_check = kNow - 61 * kSecond;
    c.scale_down_threshold = 90 * kSecond;
  }
};

TEST_P(AutoscalerBothVariants, IdleLongerThanThresholdScalesDown) {
  ScaleDownCase k(history(100));
  const auto d = p->decide(k.s, k.c);
  EXPECT_EQ(d.action, Action::ScaleDown);
  EXPECT_TRUE(d.scale_down_checked);
  ASSERT_EQ(d.remove.size(), 1u);
  EXPECT_EQ(d.remove[0].node_id, "node-1");
  EXPECT_EQ(d.remove[0].job_id, "job-node-1");
  EXPECT_EQ(d.idle_for, 100 * kSecond);
}

TEST_P(AutoscalerBothVariants, IdleExactlyThresholdDoesNotScaleDown) {
  ScaleDownCase k(history(90));
  const auto d = p->decide(k.s, k.c);
  EXPECT_EQ(d.action, Action::None);
  EXPECT_TRUE(d.scale_down_checked) << "the check ran and restarts its interval";
  EXPECT_TRUE(d.remove.empty());
}

TEST_P(AutoscalerBothVariants, BusySampleBreaksTheIdleRun) {
  ScaleDownCase k(history(200, {50}));
  EXPECT_EQ(p->decide(k.s, k.c).action, Action::None) << "idle for only 40 s since the busy sample";
  ScaleDownCase at_threshold(history(200, {100}));
  EXPECT_EQ(p->decide(at_threshold.s, at_threshold.c).action, Action::None) << "idle for exactly 90 s since";
  ScaleDownCase later(history(200, {110}));
  EXPECT_EQ(p->decide(later.s, later.c).action, Action::ScaleDown) << "idle for 100 s since";
}

TEST_P(AutoscalerBothVariants, BusyGpuIsNotIdle) {
  std::deque<StatusSample> h;
  for (int ago = 200; ago >= 0; ago -= 10)
    h.push_back(StatusSample{kNow - ago * kSecond, {usage("node-1", 0, 0.01)}});
  ScaleDownCase k(h);
  EXPECT_EQ(p->decide(k.s, k.c).action, Action::None);
}

TEST_P(AutoscalerBothVariants, CpuOnlyNodeIdleOnCpuAlone) {
  EXPECT_TRUE(is_idle(usage("n", 0, 0, 0)));
  EXPECT_FALSE(is_idle(usage("n", 0.5, 0, 0)));
  EXPECT_FALSE(is_idle(usage("n", 0, 0.01, 1)));
}

// ProxyActor._get_pending_actors drops actors asking 0 CPU, 0 GPU and 0
// memory: alone, they are no pending demand, and an idle worker goes.
TEST_P(AutoscalerBothVariants, ActorsAskingNothingDoNotBlockScaleDown) {
  ScaleDownCase k(history(300));
  k.s.actors = {ResourceSet{}, ResourceSet{{kVramMB, 8000}}};
  const auto d = p->decide(k.s, k.c);
  EXPECT_EQ(d.action, Action::ScaleDown) << d.note;
  EXPECT_TRUE(d.scale_down_checked);
}

TEST_P(AutoscalerBothVariants, PendingDemandBlocksScaleDown) {
  ScaleDownCase k(history(300));
  k.s.actors = {kVramReplica};
  k.s.creation_in_flight = true;  // so no scale-up either
  const auto d = p->decide(k.s, k.c);
  EXPECT_EQ(d.action, Action::None);
  EXPECT_FALSE(d.scale_down_checked);
  EXPECT_TRUE(d.remove.empty());
  k.s.actors.clear();
  k.s.jobs = {ResourceSet{{kCPU, 1}}};
  EXPECT_NE(p->decide(k.s, k.c).action, Action::ScaleDown);
}

TEST_P(AutoscalerBothVariants, CheckIntervalNotElapsedSkipsTheCheck) {
  ScaleDownCase k(history(300));
  k.s.last_scale_down_check = kNow - 59 * kSecond;
  const auto d = p->decide(k.s, k.c);
  EXPECT_EQ(d.action, Action::None);
  EXPECT_FALSE(d.scale_down_checked);
}

// The reference's last-check time starts at the epoch: the first tick checks.
TEST_P(AutoscalerBothVariants, NeverCheckedBeforeChecksOnTheFirstTick) {
  ScaleDownCase k(history(300));
  k.s.last_scale_down_check.reset();
  const auto d = p->decide(k.s, k.c);
  EXPECT_TRUE(d.scale_down_checked);
  EXPECT_EQ(d.action, Action::ScaleDown);
}

// The interval must be exceeded, not reached: a check exactly 60 s after the
// last waits for the next tick.
TEST_P(AutoscalerBothVariants, CheckExactlyOneIntervalLaterIsNotDue) {
  ScaleDownCase k(history(300));
  k.s.last_scale_down_check = kNow - 60 * kSecond;
  EXPECT_FALSE(p->decide(k.s, k.c).scale_down_checked);
  k.s.last_scale_down_check = kNow - 60 * kSecond - 1;
  EXPECT_TRUE(p->decide(k.s, k.c).scale_down_checked);
}

TEST_P(AutoscalerBothVariants, NoScaleDownAtMinWorkers) {
  ScaleDownCase k(history(300));
  k.c.min_workers = 1;
  const auto d = p->decide(k.s, k.c);
  EXPECT_EQ(d.action, Action::None);
  EXPECT_FALSE(d.scale_down_checked);
}

TEST_P(AutoscalerBothVariants, CurrentlyBusyNodeIsNotRemoved) {
  ScaleDownCase k(history(300));
  k.h.update(usage("node-1", 2));  // busy in the newest sample, the current status
  EXPECT_EQ(p->decide(k.s, k.c).action, Action::None);
}

TEST_P(AutoscalerBothVariants, OnlyTheIdleWorkerIsListed) {
  std::deque<StatusSample> h;
  for (int ago = 200; ago >= 0; ago -= 10)
    h.push_back(StatusSample{kNow - ago * kSecond, {usage("node-1", 0), usage("node-2", 4)}});
  ScaleDownCase k(h);
  k.s.worker_jobs = 2;
  const auto d = p->decide(k.s, k.c);
  ASSERT_EQ(d.action, Action::ScaleDown);
  ASSERT_EQ(d.remove.size(), 1u);
  EXPECT_EQ(d.remove[0].node_id, "node-1");
}

TEST_P(AutoscalerBothVariants, SampleWithNoWorkersEndsTheIdleRun) {
  std::deque<StatusSample> h;
  for (int ago = 200; ago > 50; ago -= 10) h.push_back(StatusSample{kNow - ago * kSecond, {}});
  for (const auto& sample : history(50)) h.push_back(sample);
  ScaleDownCase k(h);
  EXPECT_EQ(p->decide(k.s, k.c).action, Action::None) << "the node has existed for only 50 s";
}


// The reference's walk over full samples, newest first, keeping the workers
// idle in every sample until one is older than the threshold.
std::pair<std::vector<std::string>, Duration> reference_walk(const std::deque<StatusSample>& h, SimTime now,
                                                             Duration threshold) {
  std::set<std::string> candidates;
  Duration max_idle = 0;
  bool first = true;
  for (auto it = h.rbegin(); it != h.rend(); ++it) {
    std::set<std::string> idle;
    for (const auto& w : it->workers)
      if (is_idle(w)) idle.insert(w.node_id);
    if (idle.empty()) break;
    if (first) {
      candidates = idle;
      first = false;
    } else {
      std::set<std::string> overlap;
      std::set_intersection(candidates.begin(), candidates.end(), idle.begin(), idle.end(),
                            std::inserter(overlap, overlap.begin()));
      if (overlap.empty()) break;
      candidates = overlap;
    }
    max_idle = now - it->t;
    if (max_idle > threshold) break;
  }
  std::vector<std::string> out;
  if (candidates.empty() || max_idle <= threshold) return {out, 0};
  for (const auto& w : h.back().workers)
    if (candidates.count(w.node_id)) out.push_back(w.node_id);
  return {out, max_idle};
}

// Random histories (workers joining, leaving and turning busy, samples at
// irregular and sometimes equal times, more samples than the capacity): the
// idle runs decide exactly as the walk over the full samples.
TEST(IdleHistory, DecidesAsTheWalkOverFullSamples) {
  std::mt19937_64 rng(20261129);
  int scale_downs = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t capacity = 1 + rng() % 40;
    const int n_samples = 1 + static_cast<int>(rng() % 80);
    std::deque<StatusSample> full;
    std::vector<WorkerUsage> workers;
    int next_node = 1;
    SimTime t = 0;
    for (int i = 0; i < n_samples; ++i) {
      t += static_cast<SimTime>(rng() % 4) * 5 * kSecond;  // 0, 5, 10 or 15 s later
      if (rng() % 6 == 0) workers.push_back(usage("node-" + std::to_string(next_node++), 0));
      if (!workers.empty() && rng() % 12 == 0) workers.erase(workers.begin() + static_cast<long>(rng() % workers.size()));
      for (auto& w : workers)
        if (rng() % 8 == 0) w.used_cpu = w.used_cpu > 0 ? 0 : 1;
      full.push_back(StatusSample{t, workers});
    }
    std::deque<StatusSample> kept(full.end() - static_cast<long>(std::min<std::size_t>(full.size(), capacity)), full.end());
    const IdleHistory h = idle_history(full, capacity);
    AutoscalerSnapshot s;
    s.now = t;
    s.history = &h;
    s.worker_jobs = 100;
    AutoscalerConfig c;
    c.scale_down_threshold = static_cast<Duration>(rng() % 8) * 10 * kSecond;
    const auto want = reference_walk(kept, s.now, c.scale_down_threshold);
    const ScaleDecision d = decide_scale_down(s, c);
    std::vector<std::string> got;
    for (const auto& w : d.remove) got.push_back(w.node_id);
    ASSERT_EQ(got, want.first) << "trial " << trial;
    ASSERT_EQ(d.action == Action::ScaleDown, !want.first.empty()) << "trial " << trial;
    if (!got.empty()) {
      ASSERT_EQ(d.idle_for, want.second) << "trial " << trial;
      ++scale_downs;
    }
  }
  EXPECT_GT(scale_downs, 40) << "the random histories exercise scale-down";
}

// The tick reads the cluster's pending queues through views: the same demand
// is selected as from copied lists, and a view changes nothing in the cluster.
TEST(RequestList, AViewOfThePendingQueueSelectsAsACopyWould) {
  ClusterState cs;
  const std::vector<ResourceSet> actors = {ResourceSet{{kCPU, 2}}, ResourceSet{{kGPU, 0.5}},
                                           ResourceSet{{"slurm_job_id:9", 1}}, ResourceSet{}};
  for (const auto& r : actors) cs.submit(DemandKind::Actor, "a", "r", r, 0);
  cs.submit(DemandKind::Task, "a", "t", ResourceSet{{kCPU, 1}}, 0);
  auto viewed = at_now();
  viewed.actors = RequestList::view(cs.pending_queue(DemandKind::Actor));
  viewed.tasks = RequestList::view(cs.pending_queue(DemandKind::Task));
  viewed.jobs = RequestList::view(cs.pending_queue(DemandKind::Job));
  auto copied = at_now();
  for (const auto& r : actors) copied.actors.push_back(r);
  copied.tasks.push_back(ResourceSet{{kCPU, 1}});
  EXPECT_EQ(viewed.actors.size(), 4u);
  EXPECT_TRUE(viewed.jobs.empty());
  ASSERT_TRUE(select_demand(viewed).has_value());
  EXPECT_TRUE(*select_demand(viewed) == *select_demand(copied));
  EXPECT_TRUE(*select_demand(viewed) == (ResourceSet{{kGPU, 0.5}})) << "the newest actor asking for something";
  // Appending to a view copies it first; the cluster's queue is untouched.
  viewed.actors.push_back(ResourceSet{{kCPU, 7}});
  EXPECT_EQ(viewed.actors.size(), 5u);
  EXPECT_EQ(cs.pending_queue(DemandKind::Actor).size(), 4u);
  EXPECT_TRUE(*select_demand(viewed) == (ResourceSet{{kCPU, 7}}));
  viewed.actors.clear();
  EXPECT_TRUE(*select_demand(viewed) == (ResourceSet{{kCPU, 1}})) << "falls through to the tasks";
}

}  // namespace
}  // namespace vramsim
