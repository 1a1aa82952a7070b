// The workers monitor's cancel waits against a backend that counts its
// listings: a wait for many cancelled jobs asks once per poll for all of
// them, and never for the whole listing; N workers scaled down at once each
// ask about their own job only. Built on the simulated partition, wrapped,
// so every figure is exact.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/sim/sim_slurm_backend.hpp"
#include "control/control_plane.hpp"
#include "engine/event_loop.hpp"

namespace vramsim {
namespace {

// Forwards to the simulated partition and counts every listing.
class CountingBackend final : public ClusterBackend, public BackendListener {
 public:
  CountingBackend(Executor& exec, SimSlurmBackend& inner) : exec_(exec), inner_(inner) { inner_.set_listener(this); }

  struct Query {
    SimTime t = 0;
    std::size_t asked = 0, answered = 0;
  };
  mutable std::size_t full_listings = 0;
  mutable std::vector<Query> queries;  // still_listed calls

  void submit_worker(const WorkerJobSize& size, SubmitDone done) override { inner_.submit_worker(size, done); }
  void cancel_jobs(const std::vector<std::string>& ids) override { inner_.cancel_jobs(ids); }
  std::vector<JobInfo> list_jobs() const override {
    ++full_listings;
    return inner_.list_jobs();
  }
  std::size_t job_count() const override { return inner_.job_count(); }
  std::vector<std::string> still_listed(const std::vector<std::string>& ids) const override {
    auto out = inner_.still_listed(ids);
    queries.push_back(Query{exec_.now(), ids.size(), out.size()});
    return out;
  }
  void stop_node(const std::string& id) override { inner_.stop_node(id); }
  void call_replica(const std::string& job, const std::string& replica, const Json& payload, CallDone done) override {
    inner_.call_replica(job, replica, payload, std::move(done));
  }
  void node_registered(NodeSpec spec) override { listener_->node_registered(std::move(spec)); }
  void node_lost(const std::string& job, const std::string& reason) override { listener_->node_lost(job, reason); }

 private:
  Executor& exec_;
  SimSlurmBackend& inner_;
};

WorkerJobSize worker_size() {
  WorkerJobSize z;
  z.gpus = 1;
  z.cpus = 8;
  z.mem_per_cpu_gb = 16;
  return z;
}

struct World {
  EventLoop loop;
  RandomStreams rng{11};
  TraceRecorder trace;
  std::shared_ptr<MemorySink> sink = std::make_shared<MemorySink>();
  ClusterState cluster;
  std::unique_ptr<SimSlurmBackend> sim;
  std::unique_ptr<CountingBackend> backend;
  std::unique_ptr<ControlPlane> control;

  World(int nodes, int warm, Duration cancel_latency) {
    trace.add_sink(sink);
    NodeSpec head;
    head.ip = "10.0.0.254";
    head.head = true;
    head.resources.set(kCPU, 0);
    cluster.add_node(std::move(head), 0);
    SimSlurmConfig sc;
    PartitionNodeType t;
    t.count = nodes;
    sc.nodes = {t};
    sc.cancel_latency = LatencyModel::fixed(cancel_latency);
    PolicySet policies = resolve_policies("fixed");
    sim = std::make_unique<SimSlurmBackend>(loop, rng, trace, sc, policies.advertisement);
    backend = std::make_unique<CountingBackend>(loop, *sim);
    ControlConfig cfg;
    cfg.autoscaler.max_workers = nodes;
    cfg.autoscaler.scale_down_threshold = 30 * kSecond;
    control = std::make_unique<ControlPlane>(loop, *backend, cluster, trace, rng, std::move(policies), cfg);
    for (int i = 0; i < warm; ++i) sim->start_warm_worker(worker_size());
    control->start();
  }
  std::vector<TraceEvent> of(const std::string& kind) const { return sink->of_kind(trace_kind_named(kind).value()); }
};

// Shutdown's sweep cancels every job in one wait. The jobs run but have no
// node yet (still booting), so the fixed plan drains nothing and cancels
// them all; each lingers 3.5 s in squeue, so the wait polls at +1, +2, +3
// and sees them gone at +4 s.
struct SweepCounts {
  std::size_t full_listings = 0;
  std::vector<CountingBackend::Query> queries;
  std::size_t cancelled = 0;
};

SweepCounts sweep_of(int jobs) {
  World w(jobs, 0, 3500 * kMillisecond);
  for (int i = 0; i < jobs; ++i)
    w.sim->submit_worker(worker_size(), [](std::optional<std::string> id, const std::string&) {
      ASSERT_TRUE(id);
    });
  w.loop.at(10 * kSecond, [&] { w.control->shutdown(); });
  w.loop.run(5 * kMinute);
  EXPECT_TRUE(w.control->shut_down());
  const auto ended = w.of("job_ended");
  SweepCounts c{w.backend->full_listings, w.backend->queries, 0};
  for (const auto& e : ended)
    if (e["state"] == "CANCELLED") ++c.cancelled;
  return c;
}

// The simulated partition finds a job by its number: only the exact id it
// handed out names it, so "01000" neither lists nor cancels job 1000.
TEST(CancelWait, OnlyTheExactJobIdNamesAJob) {
  World w(2, 2, 1 * kSecond);
  const auto listed = w.sim->still_listed({"1000", "1001"});
  ASSERT_EQ(listed, (std::vector<std::string>{"1000", "1001"}));
  const std::vector<std::string> bad = {"01000", "1000 ", "+1000", "999", "1002", "", "abc", "99999999999999999999"};
  EXPECT_TRUE(w.sim->still_listed(bad).empty());
  w.sim->cancel_jobs(bad);
  w.loop.run(10 * kSecond);
  EXPECT_TRUE(w.of("job_cancel_requested").empty());
  EXPECT_EQ(w.sim->job_count(), 2u);
  w.sim->cancel_jobs({"1001"});
  w.loop.run(20 * kSecond);
  EXPECT_EQ(w.sim->still_listed({"1000", "1001"}), (std::vector<std::string>{"1000"}));
  EXPECT_EQ(w.sim->job_count(), 1u);
  ASSERT_EQ(w.sim->list_jobs().size(), 1u);
  EXPECT_EQ(w.sim->list_jobs()[0].id, "1000");
}

TEST(CancelWait, OneListingPerPollForManyCancelledJobs) {
  const SweepCounts one = sweep_of(1), many = sweep_of(64);
  EXPECT_EQ(one.cancelled, 1u);
  EXPECT_EQ(many.cancelled, 64u);
  // The plan, the sweep and the final report list the queue; the wait never does.
  EXPECT_EQ(one.full_listings, 3u);
  EXPECT_EQ(many.full_listings, 3u);
  // The cancel's own check, then one call per poll: the same count for 64
  // jobs as for one.
  ASSERT_EQ(many.queries.size(), 5u);
  ASSERT_EQ(one.queries.size(), many.queries.size());
  const SimTime start = many.queries.front().t;
  EXPECT_EQ(start, 10 * kSecond);
  for (std::size_t i = 0; i < many.queries.size(); ++i) {
    EXPECT_EQ(many.queries[i].t, start + static_cast<SimTime>(i) * kSecond) << "poll " << i;
    EXPECT_EQ(many.queries[i].asked, 64u) << "poll " << i;
    EXPECT_EQ(many.queries[i].answered, i < 4 ? 64u : 0u) << "poll " << i;
  }
}

TEST(CancelWait, WorkersScaledDownAtOnceAskOnlyAboutTheirOwnJob) {
  constexpr int kWorkers = 50;
  World w(kWorkers, kWorkers, 1 * kSecond);
  w.loop.run(10 * kMinute);
  const auto downs = w.of("scale_down");
  ASSERT_EQ(downs.size(), static_cast<std::size_t>(kWorkers));
  for (const auto& d : downs) EXPECT_EQ(d.t, downs.front().t) << "all in one pass";
  const auto stops = w.of("graceful_stop_done");
  ASSERT_EQ(stops.size(), static_cast<std::size_t>(kWorkers));
  for (const auto& s : stops) EXPECT_EQ(s["cancelled"], true);
  std::size_t cancelled = 0;
  for (const auto& e : w.of("job_ended"))
    if (e["state"] == "CANCELLED") ++cancelled;
  EXPECT_EQ(cancelled, static_cast<std::size_t>(kWorkers));
  // No full listing anywhere in the run (no deploy, no shutdown); each wait
  // asks about its one job: at its cancel and at each poll until it is gone.
  EXPECT_EQ(w.backend->full_listings, 0u);
  ASSERT_GE(w.backend->queries.size(), static_cast<std::size_t>(2 * kWorkers));
  for (const auto& q : w.backend->queries) EXPECT_EQ(q.asked, 1u);
  EXPECT_LE(w.backend->queries.size(), static_cast<std::size_t>(3 * kWorkers));
}

}  // namespace
}  // namespace vramsim
