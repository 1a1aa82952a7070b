// The control plane against a backend that answers later, as the live SLURM
// backend does: sbatch answers after a delay, a replica fails to start, the
// backend measures driver memory itself. Built on the simulated partition,
// wrapped, so every figure is exact.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/sim/sim_slurm_backend.hpp"
#include "control/control_plane.hpp"
#include "engine/event_loop.hpp"

namespace vramsim {
namespace {

// Forwards to the simulated partition, with knobs for the live backend's ways.
class WrappedBackend final : public ClusterBackend, public BackendListener {
 public:
  WrappedBackend(Executor& exec, SimSlurmBackend& inner) : exec_(exec), inner_(inner) { inner_.set_listener(this); }
  Duration submit_delay = 0;
  bool fail_replicas = false;
  std::optional<std::int64_t> measured_bytes;
  std::vector<ReplicaStart> started;
  std::vector<std::string> stopped;

  void submit_worker(const WorkerJobSize& size, SubmitDone done) override {
    exec_.after(submit_delay, [this, size, done] { inner_.submit_worker(size, done); });
  }
  void cancel_jobs(const std::vector<std::string>& ids) override { inner_.cancel_jobs(ids); }
  std::vector<JobInfo> list_jobs() const override { return inner_.list_jobs(); }
  void stop_node(const std::string& id) override { inner_.stop_node(id); }
  void start_replica(const ReplicaStart& r, StartDone done) override {
    started.push_back(r);
    if (fail_replicas) done(false, "replica process exited with status 1");
    else done(true, "");
  }
  void stop_replica(const std::string& job, const std::string& replica) override { stopped.push_back(job + "/" + replica); }
  void call_replica(const std::string& job, const std::string& replica, const Json& payload, CallDone done) override {
    inner_.call_replica(job, replica, payload, std::move(done));
  }
  bool measures_memory() const override { return measured_bytes.has_value(); }
  std::optional<DeviceObservation> observed_memory(const std::string&, int) const override {
    if (!measured_bytes) return std::nullopt;
    return DeviceObservation{*measured_bytes, exec_.now()};
  }
  void node_registered(NodeSpec spec) override { listener_->node_registered(std::move(spec)); }
  void node_lost(const std::string& job, const std::string& reason) override { listener_->node_lost(job, reason); }

 private:
  Executor& exec_;
  SimSlurmBackend& inner_;
};

struct World {
  EventLoop loop;
  RandomStreams rng{7};
  TraceRecorder trace;
  std::shared_ptr<MemorySink> sink = std::make_shared<MemorySink>();
  ClusterState cluster;
  std::unique_ptr<SimSlurmBackend> sim;
  std::unique_ptr<WrappedBackend> backend;
  std::unique_ptr<ControlPlane> control;

  explicit World(int max_workers = 1, Duration cooldown = 60 * kSecond, int node_cpus = 8) {
    trace.add_sink(sink);
    NodeSpec head;
    head.ip = "10.0.0.254";
    head.head = true;
    head.resources.set(kCPU, 0);
    cluster.add_node(std::move(head), 0);
    SimSlurmConfig sc;
    PartitionNodeType a100;
    a100.count = 4;
    a100.cpus = node_cpus;
    sc.nodes = {a100};
    sc.call = LatencyModel::fixed(2 * kSecond);
    PolicySet policies = resolve_policies("fixed");
    sim = std::make_unique<SimSlurmBackend>(loop, rng, trace, sc, policies.advertisement);
    backend = std::make_unique<WrappedBackend>(loop, *sim);
    ControlConfig cfg;
    cfg.autoscaler.max_workers = max_workers;
    cfg.autoscaler.scale_up_cooldown = cooldown;
    control = std::make_unique<ControlPlane>(loop, *backend, cluster, trace, rng, std::move(policies), cfg);
    control->start();
  }
  std::vector<TraceEvent> of(const std::string& kind) const { return sink->of_kind(trace_kind_named(kind).value()); }
};

AppSpec app(const std::string& id, std::int64_t gmb = 8000, const std::string& kind = "plain") {
  AppSpec a;
  a.id = id;
  a.gpu_memory_mb = gmb;
  a.kind = kind;
  return a;
}

TEST(BackendContract, CreationStaysInFlightUntilSbatchAnswers) {
  // sbatch answers after 45 s; with no cooldown and room for 4 workers, a
  // control plane that forgot the unanswered submission would scale up again
  // on every 10 s tick.
  World w(4, 0);
  w.backend->submit_delay = 45 * kSecond;
  w.control->deploy(app("a"));
  w.loop.run(60 * kSecond);
  const auto ups = w.of("scale_up");
  ASSERT_EQ(ups.size(), 1u);
  EXPECT_EQ(ups[0].t, kSecond) << "the worker loop's first pass";
  const auto jobs = w.of("job_submitted");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].t, 46 * kSecond) << "submitted when sbatch answered";
}

TEST(BackendContract, FailedSubmissionIsTracedAndClearsTheCreation) {
  // Worker jobs ask for 8 CPUs (the default) on 4-CPU nodes: sbatch refuses.
  World w(4, 0, 4);
  w.backend->submit_delay = 5 * kSecond;
  w.control->deploy(app("a"));
  w.loop.run(40 * kSecond);
  const auto failed = w.of("worker_creation_failed");
  ASSERT_GE(failed.size(), 1u);
  EXPECT_EQ(failed[0].t, 6 * kSecond) << "the loop's first pass at 1 s, then sbatch's 5 s";
  EXPECT_NE(failed[0]["error"].get<std::string>().find("Requested node configuration"), std::string::npos);
  EXPECT_GE(w.of("scale_up").size(), 2u) << "a refused submission is not a creation in flight";
}

TEST(BackendContract, ReplicaStartCarriesTheBookingAndKind) {
  World w;
  w.control->deploy(app("p", 8000, "probe"));
  w.loop.run(200 * kSecond);
  ASSERT_EQ(w.backend->started.size(), 1u);
  const auto& r = w.backend->started[0];
  EXPECT_EQ(r.app, "p");
  EXPECT_EQ(r.replica, "p#0");
  EXPECT_EQ(r.gpu_memory_mb, 8000);
  EXPECT_EQ(r.device, 0);
  EXPECT_EQ(r.kind, "probe");
  EXPECT_EQ(r.job_id, w.of("job_submitted").at(0)["job"]);
  w.control->stop_app("p");
  ASSERT_EQ(w.backend->stopped.size(), 1u);
  EXPECT_EQ(w.backend->stopped[0], r.job_id + "/p#0");
}

TEST(BackendContract, ReplicaThatFailsToStartNeverRuns) {
  World w;
  w.backend->fail_replicas = true;
  w.control->deploy(app("a"));
  w.loop.run(300 * kSecond);
  const auto failed = w.of("replica_start_failed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]["error"], "replica process exited with status 1");
  EXPECT_TRUE(w.of("replica_running").empty());
  EXPECT_NE(w.control->app("a")->life.state(), AppState::Running);
}

TEST(BackendContract, CallReachesARunningReplicaAndIsAnsweredAfterItsLatency) {
  World w;
  w.control->deploy(app("a"));
  w.loop.at(10 * kSecond, [&] { w.control->call_app("a", Json{{"n", 1}}); });  // nothing running yet
  w.loop.at(150 * kSecond, [&] { w.control->call_app("a", Json{{"n", 2}}); });
  w.loop.run(200 * kSecond);
  const auto failed = w.of("call_failed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].t, 10 * kSecond);
  EXPECT_EQ(failed[0]["error"], "no running replica of a");
  const auto sent = w.of("call_sent");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["replica"], "a#0");
  const auto result = w.of("call_result");
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0].t, 152 * kSecond);
  EXPECT_EQ(result[0]["latency_us"], 2 * kSecond);
  EXPECT_EQ(result[0]["ok"], true);
  EXPECT_EQ(result[0]["result"]["replica"], "a#0");
}

TEST(BackendContract, MeasuredDriverMemoryWinsOverTheDeclaredFigure) {
  World w;
  w.backend->measured_bytes = 1234567;
  w.control->deploy(app("a"));
  w.loop.run(200 * kSecond);
  const Node* worker = nullptr;
  for (const Node* n : w.cluster.alive_nodes())
    if (!n->spec.head) worker = n;
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(worker->devices().at(0).observed_used_bytes.has_value());
  EXPECT_EQ(*worker->devices().at(0).observed_used_bytes, 1234567);
}

}  // namespace
}  // namespace vramsim
