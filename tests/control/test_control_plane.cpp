// The control plane driving the simulated SLURM backend on the virtual clock:
// one A100-40GB partition node, max_workers=1, fixed latencies, so every
// figure below follows from the defaults and is exact.
#include "control/control_plane.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/sim/sim_slurm_backend.hpp"
#include "control/workers_monitor.hpp"
#include "models/registry.hpp"
#include "engine/event_loop.hpp"
#include "models/status.hpp"

namespace vramsim {
namespace {

constexpr Duration kQueueWait = 5 * kSecond;
constexpr Duration kNodeBoot = 20 * kSecond;
constexpr Duration kRegistration = 5 * kSecond;

struct SimOptions {
  Duration queue_wait = kQueueWait;
  Duration scale_down_threshold = 300 * kSecond;
  Duration runtime_env_install = 0;
  Duration ray_stop = 5 * kSecond;
  int max_workers = 1;
  int nodes = 1;  // in the partition
  int gpus = 1;   // per node, and per worker job (the job's default GPU count)
  Duration introspection_env_build = 20 * kSecond;  // the default
  Duration submit_worker_start = 0, submit_duration = 0;  // the defaults
  bool keep_status = false;  // ClusterStatus keeps each pass's snapshot
  Duration proxy_env_install = 0;  // the default
  Duration dashboard_first_report = 0;  // the default
  Duration head_exit = 0;                           // the default
  Duration serve_shutdown = 0, ray_shutdown = 0, head_ray_stop = 0;  // the defaults
  std::optional<Duration> job_exit_after_stop = std::nullopt;  // the default: never
};

struct Sim {
  EventLoop loop;
  RandomStreams rng{2024};
  TraceRecorder trace;
  std::shared_ptr<MemorySink> sink = std::make_shared<MemorySink>();
  ClusterState cluster;
  std::unique_ptr<SimSlurmBackend> backend;
  std::unique_ptr<ControlPlane> control;

  explicit Sim(const std::string& policy, SimOptions o = {}) {
    trace.add_sink(sink);
    NodeSpec head;
    head.ip = "10.0.0.254";
    head.head = true;
    head.resources.set(kCPU, 0);  // nothing runs on the head but the apps' proxies:
    head.resources.set(kMemory, 16.0 * (std::int64_t{1} << 30));  // 16 GB, vramsim's default head
    cluster.add_node(std::move(head), 0);

    SimSlurmConfig sc;
    PartitionNodeType a100;
    a100.count = o.nodes;
    a100.cpus = 8;
    a100.memory_gb = 128;
    a100.gpus = o.gpus;
    a100.gpu_model = "NVIDIA A100-SXM4-40GB";
    a100.accelerator_type = "A100";
    a100.gpu_memory_mb = 40960;
    sc.nodes = {a100};
    sc.queue_wait = LatencyModel::fixed(o.queue_wait);
    sc.node_boot = LatencyModel::fixed(kNodeBoot);
    sc.registration = LatencyModel::fixed(kRegistration);
    sc.ray_stop = LatencyModel::fixed(o.ray_stop);
    sc.cancel_latency = LatencyModel::fixed(1 * kSecond);
    if (o.job_exit_after_stop) sc.job_exit_after_stop = LatencyModel::fixed(*o.job_exit_after_stop);

    PolicySet policies = parse_policy_spec(policy);
    backend = std::make_unique<SimSlurmBackend>(loop, rng, trace, sc, policies.advertisement);
    ControlConfig cfg;
    cfg.autoscaler.max_workers = o.max_workers;
    cfg.autoscaler.scale_down_threshold = o.scale_down_threshold;
    cfg.autoscaler.defaults.gpus = o.gpus;
    cfg.runtime_env_install = LatencyModel::fixed(o.runtime_env_install);
    cfg.introspection_env_build = o.introspection_env_build;
    cfg.submit_worker_start = o.submit_worker_start;
    cfg.proxy_env_install = LatencyModel::fixed(o.proxy_env_install);
    cfg.dashboard_first_report = LatencyModel::fixed(o.dashboard_first_report);
    cfg.submit_duration = o.submit_duration;
    cfg.head_exit = LatencyModel::fixed(o.head_exit);
    cfg.serve_shutdown = LatencyModel::fixed(o.serve_shutdown);
    cfg.ray_shutdown = LatencyModel::fixed(o.ray_shutdown);
    cfg.head_ray_stop = LatencyModel::fixed(o.head_ray_stop);
    control = std::make_unique<ControlPlane>(loop, *backend, cluster, trace, rng, std::move(policies), cfg);
    if (o.keep_status) control->keep_status(StatusOptions{true, 30 * kSecond, true, nullptr});
    control->start();
  }

  std::vector<TraceEvent> of(const std::string& kind) const { return sink->of_kind(trace_kind_named(kind).value()); }
  const TraceEvent* first(const std::string& kind) const {
    const TraceKind k = trace_kind_named(kind).value();
    for (const auto& e : sink->events)
      if (e.kind == k) return &e;
    return nullptr;
  }
  // The worker's own node_registered event (the head has no job).
  const TraceEvent* worker_registered() const {
    for (const auto& e : sink->events)
      if (e.kind == TraceKind::node_registered && e["job"] != "") return &e;
    return nullptr;
  }
  std::vector<TraceEvent> worker_registrations() const {
    std::vector<TraceEvent> out;
    for (const auto& e : sink->events)
      if (e.kind == TraceKind::node_registered && e["job"] != "") out.push_back(e);
    return out;
  }
  const SimJob& only_job() const {
    EXPECT_EQ(backend->jobs().size(), 1u);
    return backend->jobs().front();
  }
  void at(Duration t, std::function<void()> fn) { loop.at(t, std::move(fn)); }
};

AppSpec vram_app(std::string id = "app", std::int64_t gmb = 8000) {
  AppSpec a;
  a.id = std::move(id);
  a.gpu_memory_mb = gmb;
  return a;
}

Json strings(std::vector<std::string> v) {
  Json j = Json::array();
  for (auto& s : v) j.push_back(std::move(s));
  return j;
}

// --- (1) cold deploy with max_workers=1 ---------------------------------------------------------

TEST(ColdDeploy, FixedAdmitsOnCapacityInFlightAndPacksByVram) {
  Sim sim("fixed");
  sim.control->deploy(vram_app());
  sim.loop.run(300 * kSecond);

  const auto sizing = sim.of("sizing");
  ASSERT_EQ(sizing.size(), 1u);
  EXPECT_EQ(sizing[0]["branch"], "vram") << "no GPU known yet on an elastic cluster";

  const auto admission = sim.of("admission");
  ASSERT_EQ(admission.size(), 1u);
  EXPECT_EQ(admission[0]["admitted"], true);
  EXPECT_EQ(admission[0]["reason"], "capacity_in_flight");
  EXPECT_EQ(admission[0]["worker_jobs"], 1);
  EXPECT_EQ(admission[0]["unregistered_jobs"], 1);

  const auto ups = sim.of("scale_up");
  ASSERT_EQ(ups.size(), 1u) << "one job for the whole cold start";
  EXPECT_EQ(ups[0]["gpus"], 1);
  EXPECT_EQ(ups[0].t, kSecond) << "the worker loop's first pass, on the introspection task's demand";

  const TraceEvent* reg = sim.worker_registered();
  ASSERT_NE(reg, nullptr);
  EXPECT_EQ((*reg)["resources"]["VRAM_MB"], 40960.0);
  EXPECT_EQ((*reg)["resources"]["slurm_job_id:" + (*reg)["job"].get<std::string>()], 1.0);

  const auto placed = sim.of("replica_placed");
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0]["node_vram_available_mb"], 32960);
  EXPECT_EQ(placed[0]["vram_mb"], 8000);
  EXPECT_EQ(placed[0]["num_gpus"], 0.01);
  EXPECT_EQ(placed[0]["devices"], Json::array({0}));

  const AppRecord* app = sim.control->app("app");
  ASSERT_NE(app, nullptr);
  EXPECT_EQ(app->life.state(), AppState::Running);
  ASSERT_TRUE(app->running_at);
  // The loop's first pass 1 s + queue 5 s + boot 20 s + registration 5 s.
  EXPECT_EQ(*app->running_at, kSecond + kQueueWait + kNodeBoot + kRegistration);
}

TEST(ColdDeploy, LegacyRejectsWhileItsOwnWorkerIsInFlight) {
  Sim sim("legacy");
  sim.control->deploy(vram_app());
  sim.loop.run(300 * kSecond);

  const auto sizing = sim.of("sizing");
  ASSERT_EQ(sizing.size(), 1u);
  EXPECT_EQ(sizing[0]["branch"], "whole_gpu_fallback");

  const auto admission = sim.of("admission");
  ASSERT_EQ(admission.size(), 1u);
  EXPECT_EQ(admission[0]["admitted"], false);
  EXPECT_EQ(admission[0]["reason"], "insufficient");
  EXPECT_EQ(admission[0]["worker_jobs"], 1);
  EXPECT_EQ(admission[0]["message"],
            "Insufficient resources for application 'app'. Requested: {'num_cpus': 1, 'num_gpus': 1, 'memory': 536870912, "
            "'VRAM_MB': 0}")
      << "the cold legacy text at fba5ffe: four keys, memory the proxy deployment's 0.5 GiB";

  EXPECT_EQ(sim.of("scale_up").size(), 1u) << "the introspection task still scaled up";
  const TraceEvent* reg = sim.worker_registered();
  ASSERT_NE(reg, nullptr);
  EXPECT_FALSE((*reg)["resources"].contains("VRAM_MB"));
  EXPECT_TRUE(sim.of("replica_placed").empty());
  EXPECT_EQ(sim.control->app("app")->life.state(), AppState::DeployFailed);
  EXPECT_EQ(sim.control->app("app")->message, admission[0]["message"].get<std::string>());
}

// --- (2) shutdown while the only job is still queued ---------------------------------------------

TEST(ShutdownWhileQueued, FixedCancelsThePendingJob) {
  Sim sim("fixed", {.queue_wait = 10 * kMinute});
  sim.control->deploy(vram_app());
  sim.loop.run(30 * kSecond);
  ASSERT_EQ(sim.only_job().life.state(), JobState::Pending);

  sim.control->shutdown();
  sim.loop.run();  // drains: nothing may be left running

  EXPECT_EQ(sim.only_job().life.state(), JobState::Cancelled);
  const auto done = sim.of("shutdown_done");
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0]["jobs_left"], Json::array());
  EXPECT_LE(*sim.control->shutdown_done_at() - 30 * kSecond, 2 * kSecond);
  EXPECT_TRUE(sim.backend->list_jobs().empty());
  EXPECT_TRUE(sim.of("node_unclaimed").empty());
}

TEST(ShutdownWhileQueued, LegacyReturnsEarlyAndTheJobBurnsToItsTimeLimit) {
  Sim sim("legacy", {.queue_wait = 10 * kMinute});
  sim.control->deploy(vram_app());
  sim.loop.run(30 * kSecond);
  const std::string job = sim.only_job().id;
  ASSERT_EQ(sim.only_job().life.state(), JobState::Pending);

  sim.control->shutdown();
  const auto done = sim.of("shutdown_done");
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0]["jobs_left"], strings({job}));
  EXPECT_EQ(*sim.control->shutdown_done_at(), 30 * kSecond) << "returned at once";

  sim.loop.run();
  const SimJob& j = sim.only_job();
  EXPECT_EQ(j.life.state(), JobState::Timeout);
  ASSERT_TRUE(j.started && j.ended);
  EXPECT_EQ(*j.started, kSecond + 10 * kMinute);
  EXPECT_EQ(*j.ended - *j.started, 4 * kHour) << "the whole allocation burned";
  EXPECT_EQ(sim.of("node_unclaimed").size(), 1u) << "it joined a head that was gone";
}

// Legacy close_all cancels the creation task without awaiting it and
// returns; the task's CancelledError handler scancels its own job when the
// event loop next turns. Whether the job survives is a race with the exit.
TEST(ShutdownRace, LegacyJobSurvivesWhenTheProcessExitsAsCloseAllReturns) {
  Sim sim("legacy", {.queue_wait = 10 * kMinute});  // head_exit 0: the default
  sim.control->deploy(vram_app());
  sim.loop.run(30 * kSecond);
  const std::string job = sim.only_job().id;
  sim.control->shutdown();
  sim.loop.run(31 * kSecond);
  ASSERT_EQ(sim.of("creation_cancel_lost").size(), 1u);
  EXPECT_EQ(sim.of("creation_cancel_lost")[0]["job"], job);
  EXPECT_EQ(sim.of("shutdown_done")[0]["jobs_left"], strings({job}));
  EXPECT_TRUE(sim.of("jobs_cancelled").empty());
  EXPECT_EQ(sim.only_job().life.state(), JobState::Pending) << "the seed's leak";
}

TEST(ShutdownRace, LegacyCreationTaskCancelsItsJobWhenTheProcessLivesOn) {
  Sim sim("legacy", {.queue_wait = 10 * kMinute, .head_exit = 5 * kSecond});
  sim.control->deploy(vram_app());
  sim.loop.run(30 * kSecond);
  const std::string job = sim.only_job().id;
  sim.control->shutdown();
  sim.loop.run();
  EXPECT_TRUE(sim.of("creation_cancel_lost").empty());
  const auto cancelled = sim.of("jobs_cancelled");
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_EQ(cancelled[0]["by"], "worker creation task");
  EXPECT_EQ(cancelled[0].t, 30 * kSecond) << "at the loop's next turn, before the exit";
  ASSERT_EQ(sim.of("shutdown_done").size(), 1u);
  EXPECT_EQ(sim.of("shutdown_done")[0].t, 35 * kSecond) << "close_all returned at once, then head_exit";
  EXPECT_EQ(sim.of("shutdown_done")[0]["jobs_left"], Json::array());
  EXPECT_EQ(sim.only_job().life.state(), JobState::Cancelled) << "no leak";
  EXPECT_TRUE(sim.of("node_unclaimed").empty());
}

// The handler only covers the creation task's own job while it waits. A job
// whose node joined after the last monitor pass has no creation task any
// more, and close_all reads that pass's status: no node, so legacy returns
// early and the job survives however long the process lives on. Fixed
// sweeps it.
TEST(ShutdownRace, LegacyLeavesAJobWhoseNodeJoinedSinceTheLastPass) {
  // sbatch at the loop's first pass (1 s); queued 6 s, boot 20 s,
  // registration 5 s: the node joins at 32 s, just after the pass at
  // 31.015 s; the creation task sees it at its 36 s poll and ends. Shutdown
  // at 38 s, before the pass at 41.02 s.
  for (const std::string policy : {"legacy", "fixed"}) {
    Sim sim(policy, {.queue_wait = 6 * kSecond, .head_exit = 5 * kSecond});
    sim.control->deploy(vram_app());
    sim.loop.run(38 * kSecond);
    ASSERT_NE(sim.worker_registered(), nullptr) << policy;
    EXPECT_EQ(sim.worker_registered()->t, 32 * kSecond) << policy;
    ASSERT_EQ(sim.of("worker_joined").size(), 1u) << policy;
    const std::string job = sim.only_job().id;
    sim.control->shutdown();
    sim.loop.run(sim.loop.now() + 120 * kSecond);
    const auto plan = sim.of("shutdown_plan");
    ASSERT_EQ(plan.size(), 1u) << policy;
    EXPECT_EQ(plan[0]["drain"], 0) << policy << ": the last pass's status lists no worker";
    const auto done = sim.of("shutdown_done");
    ASSERT_EQ(done.size(), 1u) << policy;
    if (policy == "legacy") {
      EXPECT_EQ(plan[0]["return_early"], true);
      EXPECT_EQ(done[0]["jobs_left"], strings({job}));
      EXPECT_EQ(sim.only_job().life.state(), JobState::Running);
    } else {
      EXPECT_EQ(done[0]["jobs_left"], Json::array());
      EXPECT_EQ(sim.only_job().life.state(), JobState::Cancelled);
    }
  }
}

TEST(ShutdownWhileRunning, FixedDrainsAndLeavesTheQueueEmpty) {
  Sim sim("fixed");
  sim.control->deploy(vram_app());
  sim.loop.run(100 * kSecond);
  ASSERT_EQ(sim.control->app("app")->life.state(), AppState::Running);
  sim.control->shutdown();
  sim.loop.run();
  EXPECT_EQ(sim.of("shutdown_done").at(0)["jobs_left"], Json::array());
  EXPECT_TRUE(is_terminal(sim.only_job().life.state()));
  EXPECT_EQ(sim.of("graceful_stop_done").size(), 1u) << "awaited before the sweep";
}

// Shutting down stops the node under a running replica, which puts the
// replica back into pending demand. The monitor tick that lands while the
// shutdown is still in progress must not answer it with a new worker job:
// legacy would leave that job to burn to its time limit. Each shutdown time
// puts a tick (710 s) inside that policy's window.
TEST(ShutdownWhileRunning, NoScaleUpOnceShutdownHasStarted) {
  for (const auto& [policy, at] : {std::pair<std::string, SimTime>{"legacy", 709500 * kMillisecond},
                                   std::pair<std::string, SimTime>{"fixed", 704500 * kMillisecond}}) {
    const std::string name = policy;  // clang 14 cannot capture a structured binding in a lambda
    Sim sim(policy);
    sim.control->deploy(vram_app());
    sim.at(100 * kSecond, [&] { sim.control->deploy(vram_app()); });  // legacy: now that the node is up
    sim.at(at, [&] {
      ASSERT_EQ(sim.control->app("app")->life.state(), AppState::Running) << name;
      sim.control->shutdown();
    });
    sim.loop.run();
    const TraceEvent* started = sim.first("shutdown_started");
    ASSERT_NE(started, nullptr);
    for (const auto& e : sim.of("scale_up"))
      EXPECT_LT(e.t, started->t) << policy << ": scale-up at " << format_seconds(e.t) << " s during shutdown";
    EXPECT_EQ(sim.backend->jobs().size(), 1u) << policy << ": only the cold-start job was ever submitted";
    EXPECT_EQ(sim.of("shutdown_done").at(0)["jobs_left"], Json::array()) << policy;
  }
}

// --- (3) scale-down after the app is stopped ------------------------------------------------------

TEST(ScaleDown, IdleNodeIsReleasedAfterTheThreshold) {
  Sim sim("fixed", {.scale_down_threshold = 90 * kSecond});
  sim.control->deploy(vram_app());
  const SimTime stop_at = 105 * kSecond;  // between two ticks
  sim.loop.run(stop_at);
  ASSERT_EQ(sim.control->app("app")->life.state(), AppState::Running);
  sim.control->stop_app("app");
  ASSERT_EQ(sim.control->app("app")->life.state(), AppState::Deleted);
  sim.loop.run(600 * kSecond);

  const auto downs = sim.of("scale_down");
  ASSERT_EQ(downs.size(), 1u);
  EXPECT_GT(downs[0]["idle_for_us"].get<Duration>(), 90 * kSecond);
  std::vector<TraceEvent> ended;
  for (const auto& e : sim.of("job_ended")) ended.push_back(e);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_TRUE(ended[0]["state"] == "COMPLETED" || ended[0]["state"] == "CANCELLED") << ended[0]["state"];
  const Duration after_stop = ended[0].t - stop_at;
  EXPECT_GE(after_stop, 90 * kSecond);
  EXPECT_LE(after_stop, 160 * kSecond);
  std::cout << "[ figures  ] scale_down decided " << format_seconds(downs[0].t - stop_at)
            << " s after stop_app; job " << ended[0]["state"].get<std::string>() << " "
            << format_seconds(after_stop) << " s after stop_app\n";

  EXPECT_TRUE(sim.backend->list_jobs().empty());
  EXPECT_EQ(sim.cluster.alive_nodes().size(), 1u) << "only the head is left";
  EXPECT_EQ(sim.of("scale_up").size(), 1u) << "nothing asked for a new worker";
}

TEST(ScaleDown, RunningAppKeepsItsNode) {
  Sim sim("fixed", {.scale_down_threshold = 90 * kSecond});
  sim.control->deploy(vram_app());
  sim.loop.run(900 * kSecond);
  EXPECT_TRUE(sim.of("scale_down").empty());
  EXPECT_EQ(sim.control->app("app")->life.state(), AppState::Running);
}

// --- admission sums one replica per deployment class -----------------------------------------------

// AppBuilder._sum_resources counts one replica of each deployment class,
// whatever num_replicas: three replicas of 4 CPUs each are admitted on
// 8-CPU worker defaults (one worker can host one replica), in both
// variants; the check used to ask for 12 CPUs and reject the app.
TEST(ControlPlaneAdmission, OneReplicaPerClassIsWhatTheCheckSums) {
  for (const char* policy : {"legacy", "fixed"}) {
    Sim sim(policy);
    AppSpec a = vram_app();
    a.cpus = 4;
    a.replicas = 3;
    sim.control->deploy(a);
    sim.loop.run(60 * kSecond);
    const auto adm = sim.of("admission");
    ASSERT_EQ(adm.size(), 1u) << policy;
    EXPECT_EQ(adm[0]["requested"]["cpus"], 4.0) << policy;
    if (std::string(policy) == "fixed") {
      EXPECT_TRUE(adm[0]["admitted"].get<bool>()) << adm[0].fields;
      EXPECT_EQ(sim.of("replicas_submitted").at(0)["replicas"], 3) << "all three replicas are bound";
    }
  }
}

// --- admission reads the last monitor pass's status -------------------------------------------------

// A CPU-only app of `cpus` CPUs.
AppSpec cpu_app(std::string id, double cpus) {
  AppSpec a;
  a.id = std::move(id);
  a.cpus = cpus;
  a.disable_gpu = true;
  return a;
}

// A whole partition node of the Sim: 8 CPUs, 1 GPU, 128 GB.
WorkerJobSize warm_worker() {
  WorkerJobSize w;
  w.gpus = 1;
  w.cpus = 8;
  w.mem_per_cpu_gb = 16;
  return w;
}

// One warm worker of 8 CPUs (registered at 0 s, after RayCluster.start's
// pass, so first listed by the loop's pass at 1 s), max_workers 1, the
// introspection env built in 0.5 s. a (6 CPUs) and b (4 CPUs) are deployed
// together at 6.5 s: a's check at 12 s (0.5 s env + 5 s task) finds the
// node free and a's replica takes 6 CPUs at once; b's check follows a's
// task, at 17 s. manager.py:399-421@fba5ffe scans `ray_cluster.status`,
// the pass of 11.005 s, which shows the node with 8 CPUs free: b is
// admitted on a node that has 2, and its replica waits for a worker the
// cluster may not add (the live cluster would have said insufficient).
// Deployed at 17 s instead, b's check comes at 22 s, after the pass at
// 21.01 s that saw a's replica: legacy rejects (one job of max_workers 1).
TEST(AdmissionScan, ReadsTheLastPassesStatusNotTheLiveCluster) {
  for (const double b_at : {6.5, 17.0}) {
    SCOPED_TRACE(b_at);
    Sim sim("legacy", {.introspection_env_build = 500 * kMillisecond});
    sim.backend->start_warm_worker(warm_worker());
    sim.at(seconds(6.5), [&] { sim.control->deploy(cpu_app("a", 6)); });
    sim.at(seconds(b_at), [&] { sim.control->deploy(cpu_app("b", 4)); });
    sim.loop.run(120 * kSecond);
    const auto adm = sim.of("admission");
    ASSERT_EQ(adm.size(), 2u);
    EXPECT_EQ(adm[0]["app"], "a");
    EXPECT_EQ(adm[0].t, 12 * kSecond);
    EXPECT_EQ(adm[0]["reason"], "node_with_room");
    EXPECT_EQ(adm[1]["app"], "b");
    EXPECT_EQ(adm[1].t, seconds(b_at == 6.5 ? 17 : 22));
    EXPECT_EQ(adm[1]["worker_jobs"], 1);
    const auto b_placed = [&] {
      for (const auto& e : sim.of("replica_placed"))
        if (e["app"] == "b") return true;
      return false;
    }();
    if (b_at == 6.5) {
      EXPECT_EQ(adm[1]["reason"], "node_with_room") << "the pass at 11.005 s saw 8 CPUs free";
      EXPECT_TRUE(adm[1]["admitted"].get<bool>());
      EXPECT_FALSE(b_placed) << "2 CPUs are free in fact, and no worker can be added";
    } else {
      EXPECT_EQ(adm[1]["reason"], "insufficient") << "the pass at 21.01 s saw a's 6 CPUs";
      EXPECT_FALSE(adm[1]["admitted"].get<bool>());
    }
    EXPECT_TRUE(sim.of("scale_up").empty());
  }
}

// An update's check adds the app's admitted resources back to every node's
// used (manager.py:383-411@fba5ffe). a (6 CPUs) runs on the 8-CPU warm
// worker from 12 s; redeployed at 96 s asking 7 CPUs, its check at 101 s
// reads the pass of 91.045 s, which shows a's 6 CPUs: 2 free plus the 6
// added back is 8, room for 7 (without the add-back: insufficient). A second
// app c (2 CPUs) deployed at 120 s is checked at 125 s against the pass of
// 121.06 s, which shows a's new 7 CPUs: 1 free, and c is no update, so
// nothing is added back: insufficient.
TEST(AdmissionScan, AnUpdateAddsTheAppsAdmittedResourcesBack) {
  Sim sim("legacy", {.introspection_env_build = 500 * kMillisecond});
  sim.backend->start_warm_worker(warm_worker());
  sim.at(seconds(6.5), [&] { sim.control->deploy(cpu_app("a", 6)); });
  sim.at(seconds(96), [&] { sim.control->deploy(cpu_app("a", 7)); });
  sim.at(seconds(120), [&] { sim.control->deploy(cpu_app("c", 2)); });
  sim.loop.run(200 * kSecond);
  const auto adm = sim.of("admission");
  ASSERT_EQ(adm.size(), 3u);
  EXPECT_FALSE(adm[0].fields.contains("added_back")) << "a first deploy adds nothing back";
  EXPECT_EQ(adm[1].t, 101 * kSecond);
  EXPECT_EQ(adm[1]["reason"], "node_with_room") << "2 free + 6 added back";
  EXPECT_EQ(adm[1]["added_back"]["cpus"], 6.0);
  EXPECT_EQ(adm[1]["added_back"]["memory"], 0.5 * kGiB) << "the proxy deployment's 0.5 GiB";
  EXPECT_EQ(adm[2]["app"], "c");
  EXPECT_EQ(adm[2].t, 125 * kSecond);
  EXPECT_EQ(adm[2]["reason"], "insufficient");
  EXPECT_FALSE(adm[2].fields.contains("added_back"));
}

// --- the batch script after ray stop ---------------------------------------------------------------

// BioEngine's batch script ends in `ray start --block`, which loops until a
// Ray process dies with an unexpected code; `ray stop` ends them with
// SIGTERM, an expected one (scripts.py:1286-1323@5866967ffd), so after a
// stop the job runs on until scancel or its time limit: a warm worker
// (4 h limit, from 0 s) stopped at 10 s leaves Ray 5 s later (ray_stop) and
// times out at 4 h. With a script that exits 60 s after the node left
// (job_exit_after_stop), the job completes at 75 s.
TEST(JobExitAfterStop, TheJobOutlivesRayStopUnlessTheScenarioSaysItExits) {
  for (const std::optional<Duration> exit : {std::optional<Duration>(), std::optional<Duration>(60 * kSecond)}) {
    SimOptions o;
    o.job_exit_after_stop = exit;
    Sim sim("fixed", o);
    const std::string job = sim.backend->start_warm_worker(warm_worker());
    sim.at(10 * kSecond, [&] { sim.backend->stop_node(job); });
    sim.loop.run(5 * kHour);
    const SimJob& j = sim.only_job();
    ASSERT_EQ(sim.of("node_lost").size(), 1u);
    EXPECT_EQ(sim.of("node_lost")[0].t, 15 * kSecond);
    ASSERT_TRUE(j.ended);
    if (!exit) {
      EXPECT_EQ(j.life.state(), JobState::Timeout);
      EXPECT_EQ(*j.ended, 4 * kHour);
    } else {
      EXPECT_EQ(j.life.state(), JobState::Completed);
      EXPECT_EQ(*j.ended, 75 * kSecond);
    }
  }
}

// --- a blocking stop's force exit ----------------------------------------------------------------

// BioEngineWorker._stop(blocking=True) waits graceful_shutdown_timeout (60 s)
// for the cleanup, then os._exit(1) (worker.py:985-996@fba5ffe). One idle
// warm worker, shutdown at 100 s. fixed awaits the graceful stop, whose wait
// for the node polls the frozen status to its 60 s limit: the scancel would
// come at 160 s, but the force exit, armed at 100 s, comes first at 160 s
// (in the worker the timer starts before the cleanup does), and the job,
// which ray stop does not end, runs to its 4 h limit. legacy sweeps at once:
// scancel at 100 s, the job gone at 101 s (cancel 1 s), the exit then.
// Without blocking, fixed exits at 161 s with the job cancelled.
TEST(BlockingShutdown, FixedIsForcedOutBeforeItsScancelLegacySweepsFirst) {
  struct Case {
    std::string policy;
    std::optional<Duration> blocking;
  };
  for (const Case& c : {Case{"fixed", 60 * kSecond}, Case{"legacy", 60 * kSecond}, Case{"fixed", std::nullopt}}) {
    SCOPED_TRACE(c.policy + (c.blocking ? " blocking" : " by signal"));
    Sim sim(c.policy);
    const std::string job = sim.backend->start_warm_worker(warm_worker());
    sim.at(100 * kSecond, [&] { sim.control->shutdown({}, c.blocking); });
    sim.loop.run(5 * kHour);
    const auto done = sim.of("shutdown_done");
    ASSERT_EQ(done.size(), 1u);
    const SimJob& j = sim.only_job();
    ASSERT_TRUE(j.ended);
    if (c.policy == "fixed" && c.blocking) {
      ASSERT_EQ(sim.of("shutdown_force_exit").size(), 1u);
      EXPECT_EQ(sim.of("shutdown_force_exit")[0].t, 160 * kSecond);
      EXPECT_EQ(done[0].t, 160 * kSecond);
      EXPECT_EQ(done[0]["jobs_left"], strings({job}));
      EXPECT_TRUE(sim.of("jobs_cancelled").empty()) << "the scancel never ran";
      EXPECT_EQ(j.life.state(), JobState::Timeout);
      EXPECT_EQ(*j.ended, 4 * kHour);
    } else {
      EXPECT_TRUE(sim.of("shutdown_force_exit").empty());
      EXPECT_EQ(done[0].t, c.policy == "legacy" ? 101 * kSecond : 161 * kSecond);
      EXPECT_EQ(done[0]["jobs_left"], Json::array());
      EXPECT_EQ(j.life.state(), JobState::Cancelled);
    }
  }
}

// close_all stops the workers its status lists: the last pass's snapshot
// (monitor passes at 81.04 and 91.045 s, then 101.05 s). Ray loses the warm
// worker's node at 95 s (a raylet that dies; its SLURM job runs on); the
// shutdown at 100 s still finds it listed and starts its stop task, which
// asks for the node's own `slurm_job_id` resource and so cannot run: it
// times out after the 60 s grace period (graceful_stop_failed at 160 s)
// and scancels nothing. fixed awaits it, then sweeps the queue: scancel at
// 160 s, the job gone at 161 s. Legacy returns at once and sweeps first
// (the job gone at 101 s, the process with it), so the stop's timeout
// never fires. A blocking fixed stop is forced out at 160 s (its limit, set
// before the stop's), before the stop fails and before its sweep.
TEST(CloseWorker, AStopTaskOnANodeRayLostTimesOutAndScancelsNothing) {
  struct Case {
    std::string policy;
    std::optional<Duration> blocking;
  };
  for (const Case& c : {Case{"fixed", std::nullopt}, Case{"legacy", std::nullopt}, Case{"fixed", 60 * kSecond}}) {
    SCOPED_TRACE(c.policy + (c.blocking ? " blocking" : " by signal"));
    Sim sim(c.policy);
    const std::string job = sim.backend->start_warm_worker(warm_worker());
    sim.at(95 * kSecond, [&] { sim.control->node_lost(job, "raylet died"); });
    sim.at(100 * kSecond, [&] { sim.control->shutdown({}, c.blocking); });
    sim.loop.run(5 * kHour);
    ASSERT_EQ(sim.of("node_lost").size(), 1u);
    const auto plan = sim.of("shutdown_plan");
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0]["drain"], 1) << "the pass at 91.045 s lists the node";
    ASSERT_EQ(sim.of("graceful_stop_started").size(), 1u);
    EXPECT_EQ(sim.of("graceful_stop_started")[0].t, 100 * kSecond);
    EXPECT_TRUE(sim.of("node_stop_requested").empty()) << "no stop reaches a node that is gone";
    const auto failed = sim.of("graceful_stop_failed");
    const auto done = sim.of("shutdown_done");
    ASSERT_EQ(done.size(), 1u);
    const SimJob& j = sim.only_job();
    ASSERT_TRUE(j.ended);
    if (c.policy == "legacy") {
      EXPECT_TRUE(failed.empty()) << "the process exited before the stop's timeout";
      EXPECT_EQ(done[0].t, 101 * kSecond);
      EXPECT_EQ(j.life.state(), JobState::Cancelled);
      continue;
    }
    if (c.blocking) {
      // Both limits end at 160 s; the force exit was set first.
      EXPECT_TRUE(failed.empty()) << "forced out as the stop's limit came";
      EXPECT_EQ(done[0].t, 160 * kSecond);
      EXPECT_EQ(done[0]["jobs_left"], strings({job}));
      EXPECT_TRUE(sim.of("jobs_cancelled").empty());
      EXPECT_EQ(j.life.state(), JobState::Timeout);
    } else {
      ASSERT_EQ(failed.size(), 1u);
      EXPECT_EQ(failed[0].t, 160 * kSecond);
      EXPECT_EQ(failed[0]["error"], "stop command timed out");
      ASSERT_EQ(sim.of("jobs_cancelled").size(), 1u);
      EXPECT_EQ(sim.of("jobs_cancelled")[0].t, 160 * kSecond) << "the sweep, after the failed stop";
      EXPECT_EQ(done[0].t, 161 * kSecond);
      EXPECT_EQ(done[0]["jobs_left"], Json::array());
      EXPECT_EQ(j.life.state(), JobState::Cancelled);
      EXPECT_EQ(*j.ended, 161 * kSecond);
    }
  }
}

// RayCluster.stop after close_all returns (ray_cluster.py:1267-1296@fba5ffe):
// serve.shutdown, ray.shutdown, the head's `ray stop`, then the worker's
// exit. One idle warm worker, a fixed shutdown at 100 s: the graceful stop
// waits its 60 s, scancel at 160 s, the job gone at 161 s (cancel 1 s), so
// close_all returns at 161 s; with the steps 2 + 1 + 3 + 4 s the process
// exits at 171 s.
TEST(RayClusterStop, ItsStepsFollowCloseAllThenTheProcessExits) {
  SimOptions o;
  o.serve_shutdown = 2 * kSecond;
  o.ray_shutdown = 1 * kSecond;
  o.head_ray_stop = 3 * kSecond;
  o.head_exit = 4 * kSecond;
  Sim sim("fixed", o);
  sim.backend->start_warm_worker(warm_worker());
  sim.at(100 * kSecond, [&] { sim.control->shutdown(); });
  sim.loop.run(5 * kHour);
  const auto returned = sim.of("close_all_returned");
  ASSERT_EQ(returned.size(), 1u);
  EXPECT_EQ(returned[0].t, 161 * kSecond);
  EXPECT_EQ(returned[0]["serve_shutdown_us"], 2 * kSecond);
  EXPECT_EQ(returned[0]["ray_shutdown_us"], 1 * kSecond);
  EXPECT_EQ(returned[0]["head_ray_stop_us"], 3 * kSecond);
  EXPECT_EQ(returned[0]["head_exit_us"], 4 * kSecond);
  ASSERT_EQ(sim.of("shutdown_done").size(), 1u);
  EXPECT_EQ(sim.of("shutdown_done")[0].t, 171 * kSecond);
  EXPECT_EQ(sim.only_job().life.state(), JobState::Cancelled);
}

// get_gpu_memory_sizing (proxy_actor.py:439-474@1725d5c) sizes by each
// node's mean GPU: a node of an A100-40GB and an A100-80GB (40960 and 81920
// MB) counts as 61440 MB, not its smaller 40960. A 15360 MB app on the
// fraction branch (no VRAM_MB advertised): round(15360 / 61440, 2) = 0.25
// (of the smaller GPU it would be 0.375 -> 0.38).
TEST(GpuSizingView, ANodeOfMixedGpusCountsAsItsMeanGpu) {
  Sim sim("legacy");
  NodeSpec mixed;
  mixed.ip = "10.0.0.9";
  mixed.slurm_job_id = "static";
  mixed.resources.set(kCPU, 8);
  mixed.resources.set(kMemory, 64.0 * kGiB);
  for (const auto& [model, mb] : {std::pair<std::string, std::int64_t>{"NVIDIA A100-SXM4-40GB", 40960},
                                  {"NVIDIA A100-SXM4-80GB", 81920}}) {
    GpuDevice d;
    d.model = model;
    d.total_vram_mb = mb;
    mixed.devices.push_back(d);
  }
  mixed.accelerator_type = "A100";
  sim.control->node_registered(mixed);
  AppSpec a = vram_app("a", 15360);
  sim.control->deploy(a);
  sim.loop.run(60 * kSecond);
  const auto sizing = sim.of("sizing");
  ASSERT_EQ(sizing.size(), 1u);
  EXPECT_EQ(sizing[0]["min_gpu_total_mb"], 61440);
  EXPECT_EQ(sizing[0]["branch"], "fraction");
  EXPECT_EQ(sizing[0]["num_gpus"], 0.25);
}

// --- the monitor loop after an exception ---------------------------------------------------------

// Ray reports a replica of num_cpus=0 with no CPU key at all (zeros are
// dropped: task_options_utils.pxi@5d44e1f0, resource_set.cc@e9390d53), so
// the legacy _check_scale_up reads req.get("CPU", 1) = 1 and never divides
// by zero: the scale-up is sized from the replica's GPU, raised to the
// defaults (8 CPUs here).
TEST(ZeroCpuReplica, RayListsNoCpuKeySoLegacyScalesUpWithoutError) {
  Sim sim("legacy", {.max_workers = 2});
  sim.control->deploy(vram_app());  // legacy rejects it cold; it brings the worker up
  sim.at(100 * kSecond, [&] {
    AppSpec a = vram_app("zero-cpu");
    a.cpus = 0;
    a.replicas = 2;  // one whole GPU each (sized while no VRAM was seen): the second waits
    a.gpu_memory_mb = -1;
    sim.control->deploy(a);
  });
  sim.loop.run(600 * kSecond);
  EXPECT_TRUE(sim.of("autoscaler_error").empty());
  const auto submitted = sim.of("replicas_submitted");
  ASSERT_FALSE(submitted.empty());
  EXPECT_FALSE(submitted.back()["resources"].contains("CPU")) << submitted.back()["resources"];
  const auto ups = sim.of("scale_up");
  ASSERT_EQ(ups.size(), 2u);
  EXPECT_FALSE(ups[1]["demand"].contains("CPU")) << ups[1]["demand"];
  EXPECT_EQ(ups[1]["gpus"], 1);
  EXPECT_EQ(ups[1]["cpus"], 8);
}

// --- the monitor loop after an exception ---------------------------------------------------------

// A pass that raises: from 100 s on every monitor pass fails.
class RaisingAutoscaler final : public AutoscalerPolicy {
 public:
  ScaleDecision decide(const AutoscalerSnapshot& s, const AutoscalerConfig&) const override {
    ScaleDecision d;
    if (s.now < 100 * kSecond) return d;
    d.action = ScaleDecision::Action::Error;
    d.note = "RuntimeError: the pass raised";
    return d;
  }
};

// worker.py:845-858, 928-956@fba5ffe: the loop sleeps 1 s, then starts a
// pass once 10 s have passed since the previous pass started; a pass that
// raised sleeps min(60, 2 x 2^(n-1)) s first. Hand-worked with 5 ms of work:
// after backoffs of 2, 4 and 8 s the polls still wait for the 10 s (10.005 s
// from pass to pass); after 16, 32 and 60 s the first poll passes: 1 s +
// the backoff + the work, 17.005, 33.005 and 61.005 s.
TEST(MonitorBackoff, PassesThatRaiseSpreadOutAsTheMonitoringTaskBacksOff) {
  if (!PolicyRegistry::instance().has(AutoscalerPolicy::kModel, "raises-for-test"))
    PolicyRegistry::instance().add<AutoscalerPolicy, RaisingAutoscaler>("raises-for-test");
  Sim sim("legacy,autoscaler=raises-for-test", {.max_workers = 2});
  sim.loop.run(600 * kSecond);
  const auto errors = sim.of("autoscaler_error");
  ASSERT_GE(errors.size(), 7u);
  std::vector<double> gaps;
  for (std::size_t i = 1; i < 7; ++i) gaps.push_back(to_seconds(errors[i].t - errors[i - 1].t));
  EXPECT_EQ(gaps, (std::vector<double>{10.005, 10.005, 10.005, 17.005, 33.005, 61.005}));
  EXPECT_EQ(errors[5]["consecutive"], 6);
  EXPECT_EQ(errors[5]["backoff_us"], 60 * kSecond);
}

TEST(MonitorBackoff, TheNextPassWaitsForTheTickThenThePoll) {
  const Duration ms = kMillisecond, s = kSecond;
  EXPECT_EQ(WorkersMonitor::next_pass_after(5 * ms, 0, 10 * s, 1 * s), 10 * s + 5 * ms);
  EXPECT_EQ(WorkersMonitor::next_pass_after(1500 * ms, 0, 10 * s, 1 * s), 10 * s + 500 * ms)
      << "9 polls after a 1.5 s pass: the first check at or past 10 s";
  EXPECT_EQ(WorkersMonitor::next_pass_after(5 * ms, 8 * s, 10 * s, 1 * s), 10 * s + 5 * ms);
  EXPECT_EQ(WorkersMonitor::next_pass_after(5 * ms, 16 * s, 10 * s, 1 * s), 17 * s + 5 * ms);
  EXPECT_EQ(WorkersMonitor::next_pass_after(12 * s, 0, 10 * s, 1 * s), 13 * s) << "a pass longer than the tick";
}

// --- the cluster status the stop wait reads ------------------------------------------------------

// _close_worker waits for the stopped node to leave by polling
// RayCluster.status, the snapshot of the monitor's last pass. Shutdown has
// stopped the monitor, so the snapshot is frozen: each graceful stop waits
// its whole grace period (60 s), however soon the node really left.
TEST(StatusSnapshot, ShutdownWaitsTheWholeGracePeriodWhateverRayStopTakes) {
  for (Duration ray_stop : {1 * kSecond, 5 * kSecond, 30 * kSecond}) {
    Sim sim("fixed", {.ray_stop = ray_stop});
    sim.control->deploy(vram_app());
    sim.loop.run(100 * kSecond);
    ASSERT_EQ(sim.control->app("app")->life.state(), AppState::Running);
    sim.control->shutdown();
    sim.loop.run();
    const TraceEvent* stop = sim.first("graceful_stop_started");
    const TraceEvent* lost = sim.first("node_lost");
    const TraceEvent* cancelled = sim.first("jobs_cancelled");
    ASSERT_TRUE(stop && lost && cancelled);
    EXPECT_EQ(lost->t - stop->t, ray_stop) << "the node really left after ray_stop";
    EXPECT_EQ(cancelled->t - stop->t, 60 * kSecond) << "ray_stop " << format_seconds(ray_stop) << " s";
  }
}

// In a scale-down the monitor goes on: the wait sees the node leave at its
// first poll (every 3 s from the stop) after the next monitor pass (every
// 10.005 s from the pass that decided the scale-down), 12 s after the
// decision whether the node left 1 s or 5 s after the stop.
TEST(StatusSnapshot, AScaleDownSeesTheNodeLeaveAtTheNextMonitorPass) {
  for (Duration ray_stop : {1 * kSecond, 5 * kSecond}) {
    Sim sim("fixed", {.scale_down_threshold = 90 * kSecond, .ray_stop = ray_stop});
    sim.control->deploy(vram_app());
    sim.loop.run(105 * kSecond);
    sim.control->stop_app("app");
    sim.loop.run(600 * kSecond);
    const TraceEvent* down = sim.first("scale_down");
    const TraceEvent* lost = sim.first("node_lost");
    const TraceEvent* cancelled = sim.first("jobs_cancelled");
    ASSERT_TRUE(down && lost && cancelled);
    EXPECT_EQ(lost->t - down->t, ray_stop);
    EXPECT_EQ(cancelled->t - down->t, 12 * kSecond) << "ray_stop " << format_seconds(ray_stop) << " s";
  }
}

// --- (4) lifecycles seen through the trace -----------------------------------------------------------

// Replays every app_state event against the transition table.
void expect_legal_app_transitions(const Sim& sim) {
  std::map<std::string, std::string> state;
  const auto legal = [](const std::string& from, const std::string& to) {
    for (const auto& [a, b] : kAppTransitions)
      if (name(a) == from && name(b) == to) return true;
    return false;
  };
  for (const auto& e : sim.of("app_state")) {
    const std::string app = e["app"], from = e["from"], to = e["to"];
    auto [it, fresh] = state.try_emplace(app, "NOT_STARTED");
    EXPECT_EQ(from, it->second) << app << " at " << format_seconds(e.t);
    EXPECT_TRUE(legal(from, to)) << app << ": " << from << " -> " << to;
    it->second = to;
  }
  for (const auto& [id, app] : sim.control->apps()) {
    const auto it = state.find(id);
    EXPECT_EQ(name(app.life.state()), it == state.end() ? std::string("NOT_STARTED") : it->second) << id;
  }
}

class LifecyclesBothPolicies : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Policies, LifecyclesBothPolicies, ::testing::Values("legacy", "fixed"));

TEST_P(LifecyclesBothPolicies, RedeployNodeLossStopDeleteAndShutdownStayLegal) {
  Sim sim(GetParam());
  sim.control->deploy(vram_app("a"));
  sim.at(60 * kSecond, [&] { sim.control->deploy(vram_app("a", -1)); });  // to a whole GPU
  sim.at(120 * kSecond, [&] { sim.control->deploy(vram_app("b", 4000)); });
  sim.at(170 * kSecond, [&] {  // the worker dies under its replicas
    for (const auto& j : sim.backend->list_jobs()) sim.backend->cancel_jobs({j.id});
  });
  sim.at(400 * kSecond, [&] { sim.control->stop_app("a"); });
  sim.at(405 * kSecond, [&] { sim.control->delete_app("b"); });
  sim.at(410 * kSecond, [&] { sim.control->stop_app("never-deployed"); });
  sim.at(450 * kSecond, [&] { sim.control->deploy(vram_app("a")); });
  sim.at(700 * kSecond, [&] { sim.control->shutdown(); });
  sim.at(800 * kSecond, [&] { sim.control->deploy(vram_app("late")); });
  EXPECT_NO_THROW(sim.loop.run());
  expect_legal_app_transitions(sim);
  EXPECT_TRUE(sim.control->shut_down());
  EXPECT_EQ(sim.of("deploy_ignored").size(), 1u);
  EXPECT_EQ(sim.control->app("late"), nullptr);
  for (const auto& [id, app] : sim.control->apps())
    for (const auto& r : app.replicas)
      EXPECT_NE(r.life.state(), ReplicaState::Starting) << id << " replica left half-started";
}

TEST(Lifecycles, FixedNodeLossMakesRunningAppUnhealthyThenRunningAgain) {
  Sim sim("fixed");
  sim.control->deploy(vram_app());
  sim.at(100 * kSecond, [&] {
    for (const auto& j : sim.backend->list_jobs()) sim.backend->cancel_jobs({j.id});
  });
  EXPECT_NO_THROW(sim.loop.run(400 * kSecond));
  expect_legal_app_transitions(sim);
  std::vector<std::string> path;
  for (const auto& e : sim.of("app_state")) path.push_back(e["to"]);
  EXPECT_EQ(path, (std::vector<std::string>{"DEPLOYING", "RUNNING", "UNHEALTHY", "RUNNING"}));
  EXPECT_EQ(sim.of("scale_up").size(), 2u) << "a replacement worker";
  EXPECT_EQ(sim.of("replica_lost").size(), 1u);
}

TEST(Lifecycles, StopWhileDeployingWithdrawsThePendingReplica) {
  Sim sim("fixed");
  sim.control->deploy(vram_app());
  sim.loop.run(30 * kSecond);  // admitted at 25 s, node not there until 40 s
  ASSERT_EQ(sim.control->app("app")->life.state(), AppState::Deploying);
  sim.control->stop_app("app");
  EXPECT_NO_THROW(sim.loop.run(300 * kSecond));
  expect_legal_app_transitions(sim);
  EXPECT_EQ(sim.control->app("app")->life.state(), AppState::Deleted);
  EXPECT_TRUE(sim.of("replica_placed").empty());
  EXPECT_EQ(sim.cluster.pending_count(), 0u);
}

// Stopped while its introspection runs: the deploy is abandoned, never admitted.
TEST(Lifecycles, StopDuringIntrospectionCancelsTheDeploy) {
  Sim sim("fixed");
  sim.control->deploy(vram_app("first"));
  sim.control->deploy(vram_app("queued"));
  sim.at(5 * kSecond, [&] {
    sim.control->stop_app("first");
    sim.control->stop_app("queued");  // still waiting behind the deploy lock
  });
  EXPECT_NO_THROW(sim.loop.run(300 * kSecond));
  expect_legal_app_transitions(sim);
  EXPECT_TRUE(sim.of("admission").empty());
  ASSERT_EQ(sim.of("deploy_cancelled").size(), 1u);
  EXPECT_EQ(sim.of("deploy_cancelled")[0]["app"], "first");
  EXPECT_EQ(sim.control->app("first")->life.state(), AppState::Deleted);
  EXPECT_EQ(sim.control->app("queued")->life.state(), AppState::Deleted);
  EXPECT_EQ(sim.cluster.pending_count(), 0u);
}

TEST(Lifecycles, RedeployOfFailedAppIsLegal) {
  Sim sim("legacy");
  sim.control->deploy(vram_app());  // rejected: its own worker is in flight
  sim.at(100 * kSecond, [&] { sim.control->deploy(vram_app()); });  // the node is there now
  EXPECT_NO_THROW(sim.loop.run(300 * kSecond));
  expect_legal_app_transitions(sim);
  std::vector<std::string> path;
  for (const auto& e : sim.of("app_state")) path.push_back(e["to"]);
  EXPECT_EQ(path, (std::vector<std::string>{"DEPLOY_FAILED", "DEPLOYING", "RUNNING"}));
  const auto sizing = sim.of("sizing");
  ASSERT_EQ(sizing.size(), 2u);
  EXPECT_EQ(sizing[1]["branch"], "fraction") << "legacy worker advertises no VRAM_MB";
  EXPECT_EQ(sizing[1]["num_gpus"], 0.2);  // round(8000 / 40960, 2)
}

// Two deploys of one app queued back to back: the second replaces the first,
// so the app ends with the replicas it asked for, not twice as many.
TEST(Lifecycles, BackToBackRedeployDoesNotDoubleTheReplicas) {
  Sim sim("fixed");
  sim.control->deploy(vram_app());
  sim.control->deploy(vram_app());
  EXPECT_NO_THROW(sim.loop.run(300 * kSecond));
  expect_legal_app_transitions(sim);
  const AppRecord* app = sim.control->app("app");
  ASSERT_NE(app, nullptr);
  EXPECT_EQ(app->life.state(), AppState::Running);
  EXPECT_EQ(app->replicas.size(), 1u);
  const Node* worker = sim.cluster.alive_nodes().back();
  EXPECT_EQ(worker->available.get(kVramMB), 40960.0 - 8000.0) << "one replica's VRAM booked";
}

}  // namespace
}  // namespace vramsim

namespace vramsim {
namespace {

// --- the reference's finer points ---------------------------------------------------------------

// AppBuilder._introspect_via_ray_task: num_cpus=0, so Ray lists it with no
// required resources. Pending while its runtime env builds (20 s), it makes
// the worker loop's first monitor pass (1 s) scale up "with defaults"; then it runs on the head
// (0 CPUs) for 5 s, and build() awaits it: the resource check follows.
TEST(Introspection, ZeroCpusPendingWhileItsEnvBuildsScalesUpWithDefaultsThenRunsOnTheHead) {
  Sim sim("fixed");
  sim.control->deploy(vram_app());
  sim.loop.run(300 * kSecond);
  const auto submitted = sim.of("introspection_submitted");
  ASSERT_EQ(submitted.size(), 1u);
  EXPECT_TRUE(submitted[0]["resources"].empty()) << submitted[0]["resources"];
  const auto ups = sim.of("scale_up");
  ASSERT_EQ(ups.size(), 1u);
  EXPECT_EQ(ups[0].t, kSecond) << "the worker loop's first pass, while the task is pending";
  EXPECT_TRUE(ups[0]["demand"].empty()) << "scaled up with defaults: " << ups[0]["demand"];
  EXPECT_EQ(ups[0]["gpus"], 1);
  const auto placed = sim.of("task_placed");
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].t, 20 * kSecond) << "at once when its env exists, on the head of 0 CPUs";
  EXPECT_EQ(placed[0]["node"], "head");
  ASSERT_EQ(sim.of("introspection_done").size(), 1u);
  EXPECT_EQ(sim.of("introspection_done")[0].t, 25 * kSecond);
  ASSERT_EQ(sim.of("admission").size(), 1u);
  EXPECT_EQ(sim.of("admission")[0].t, 25 * kSecond) << "awaited: the check follows the task";
  EXPECT_EQ(sim.of("admission")[0]["reason"], "capacity_in_flight");
  EXPECT_EQ(sim.cluster.pending_count(), 0u);
}

// Ray caches the baseline env: a later deploy's task asks nothing and runs
// at once, so it is never pending and scales nothing up.
TEST(Introspection, TheEnvIsBuiltOncePerRun) {
  SimOptions o;
  o.max_workers = 2;
  Sim sim("fixed", o);
  sim.control->deploy(vram_app("first"));
  sim.at(300 * kSecond, [&] { sim.control->deploy(vram_app("second", 4000)); });
  sim.loop.run(600 * kSecond);
  const auto submitted = sim.of("introspection_submitted");
  ASSERT_EQ(submitted.size(), 2u);
  EXPECT_EQ(submitted[0]["env_build_us"], 20 * kSecond);
  EXPECT_EQ(submitted[1]["env_build_us"], 0);
  const auto admission = sim.of("admission");
  ASSERT_EQ(admission.size(), 2u);
  EXPECT_EQ(admission[1].t, 305 * kSecond);
  EXPECT_EQ(admission[1]["reason"], "node_with_room");
  EXPECT_EQ(sim.of("scale_up").size(), 1u) << "below max_workers, yet nothing pending to scale up for";
}

// The race the seeds describe needs a monitor pass while the task is
// pending. An env that builds before the worker loop's first pass (1 s; the
// start-up pass at 0 s came before the deploy) leaves no job in flight at
// the check: legacy then admits on "can spawn a worker".
TEST(Introspection, AnEnvBuiltBeforeThePassLeavesNoJobInFlightAndLegacyAdmits) {
  SimOptions quick;
  quick.introspection_env_build = 500 * kMillisecond;
  Sim sim("legacy", quick);
  sim.control->deploy(vram_app());
  sim.loop.run(300 * kSecond);
  ASSERT_EQ(sim.of("admission").size(), 1u);
  EXPECT_EQ(sim.of("admission")[0].t, 5500 * kMillisecond);
  EXPECT_EQ(sim.of("admission")[0]["worker_jobs"], 0);
  EXPECT_EQ(sim.of("admission")[0]["admitted"], true);
  EXPECT_EQ(sim.of("admission")[0]["reason"], "can_spawn_worker");
  Sim slow("legacy");  // 20 s: the pass at 1 s falls in it
  slow.control->deploy(vram_app());
  slow.loop.run(300 * kSecond);
  ASSERT_EQ(slow.of("admission").size(), 1u);
  EXPECT_EQ(slow.of("admission")[0]["worker_jobs"], 1);
  EXPECT_EQ(slow.of("admission")[0]["admitted"], false);
}

// AppBuilder.submit (builder.py:828-865@fba5ffe): after admission a second
// num_cpus=0 task, build_and_run_application, in a fresh worker process
// (max_calls=1), runs serve.run; the replicas exist once it ends. Hand-worked
// on a warm cluster: the first app runs on job 1 (scaled up at 1 s); the
// second, deployed at 300 s, finds the baseline env cached, so its check
// comes at 305 s and admits it on the worker's room. Its submit task is
// pending 305-315 s while its worker starts and runs on the head 315-317 s.
// The pass at 311.155 s (1 + 31 x 10.005 s) sees only that task, which asks
// for nothing: below max_workers and past the cooldown, it scales up "with
// defaults", a job the replica, placed on job 1's node at 317 s, never needs.
// With no window the replica is placed at 305 s and nothing scales up.
TEST(SubmitTask, APassWhileItsWorkerStartsScalesUpWithDefaults) {
  SimOptions o;
  o.max_workers = 2;
  o.nodes = 2;
  o.submit_worker_start = 10 * kSecond;
  o.submit_duration = 2 * kSecond;
  Sim sim("fixed", o);
  sim.control->deploy(vram_app("first"));
  sim.at(300 * kSecond, [&] { sim.control->deploy(vram_app("second", 4000)); });
  sim.loop.run(400 * kSecond);
  const auto admission = sim.of("admission");
  ASSERT_EQ(admission.size(), 2u);
  EXPECT_EQ(admission[1].t, 305 * kSecond);
  EXPECT_EQ(admission[1]["reason"], "node_with_room");
  const auto submitted = sim.of("submit_task_submitted");
  ASSERT_EQ(submitted.size(), 2u);
  EXPECT_EQ(submitted[1].t, 305 * kSecond);
  std::vector<TraceEvent> submit_placed;
  for (const auto& e : sim.of("task_placed"))
    if (e["label"] == "submit second") submit_placed.push_back(e);
  ASSERT_EQ(submit_placed.size(), 1u);
  EXPECT_EQ(submit_placed[0]["node"], "head");
  EXPECT_EQ(submit_placed[0].t, 315 * kSecond);
  const auto done = sim.of("submit_task_done");
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[1].t, 317 * kSecond);
  const auto ups = sim.of("scale_up");
  ASSERT_EQ(ups.size(), 2u);
  EXPECT_EQ(ups[1].t, 311155 * kMillisecond);
  EXPECT_TRUE(ups[1]["demand"].empty()) << "scaled up with defaults: " << ups[1]["demand"];
  const auto placed = sim.of("replica_placed");
  ASSERT_EQ(placed.size(), 2u);
  EXPECT_EQ(placed[1].t, 317 * kSecond) << "serve.run ran in the task";
  EXPECT_EQ(placed[1]["job"], placed[0]["job"]) << "on the first worker's room";
  EXPECT_EQ(sim.control->apps().at("second").life.state(), AppState::Running);

  SimOptions at_check = o;  // the defaults: no window, the replicas go out at the check
  at_check.submit_worker_start = 0;
  at_check.submit_duration = 0;
  Sim direct("fixed", at_check);
  direct.control->deploy(vram_app("first"));
  direct.at(300 * kSecond, [&] { direct.control->deploy(vram_app("second", 4000)); });
  direct.loop.run(400 * kSecond);
  EXPECT_TRUE(direct.of("submit_task_submitted").empty());
  ASSERT_EQ(direct.of("replica_placed").size(), 2u);
  EXPECT_EQ(direct.of("replica_placed")[1].t, 305 * kSecond);
  EXPECT_EQ(direct.of("scale_up").size(), 1u);
}

// The app's ProxyDeployment replica (bootstrap.py:718-742@fba5ffe): 0 CPUs
// and 0.5 GiB of memory, so Ray places it on the head (16 GB here) as soon as
// serve.run deploys it, at the resource check (25 s: the introspection env
// builds 20 s, runs 5 s); it then installs its own env, 100 s here. The
// app's replica runs at 31 s (job at 1 s + queue 5 + boot 20 + registration
// 5), but the app is RUNNING only with its proxy, at 125 s. Installing, the
// proxy is PENDING_CREATION, so pending demand (the fifth defect): past the
// cooldown, the pass at 61.03 s (1 + 6 x 10.005 s) scales up again, sized
// from the proxy's memory alone; pending=excludes-installing does not.
TEST(ProxyReplica, ItRunsOnTheHeadGatesRunningAndIsPendingDemandWhileItInstalls) {
  SimOptions o;
  o.max_workers = 2;
  o.nodes = 2;
  o.proxy_env_install = 100 * kSecond;
  for (const std::string pending : {"", ",pending=excludes-installing"}) {
    SCOPED_TRACE("fixed" + pending);
    Sim sim("fixed" + pending, o);
    sim.control->deploy(vram_app());
    sim.loop.run(200 * kSecond);
    const auto placed = sim.of("proxy_placed");
    ASSERT_EQ(placed.size(), 1u);
    EXPECT_EQ(placed[0].t, 25 * kSecond);
    EXPECT_EQ(placed[0]["node"], "head");
    EXPECT_EQ(placed[0]["memory"], std::int64_t{512} << 20);
    ASSERT_EQ(sim.of("replica_running").size(), 1u);
    EXPECT_EQ(sim.of("replica_running")[0].t, 31 * kSecond);
    ASSERT_EQ(sim.of("proxy_running").size(), 1u);
    EXPECT_EQ(sim.of("proxy_running")[0].t, 125 * kSecond);
    const AppRecord* app = sim.control->app("app");
    ASSERT_TRUE(app && app->running_at);
    EXPECT_EQ(*app->running_at, 125 * kSecond) << "Serve's app is RUNNING once every deployment is";
    const auto ups = sim.of("scale_up");
    if (!pending.empty()) {
      EXPECT_EQ(ups.size(), 1u) << "the installing proxy is no demand";
      continue;
    }
    ASSERT_EQ(ups.size(), 2u);
    EXPECT_EQ(ups[1].t, 61030 * kMillisecond);
    EXPECT_EQ(ups[1]["demand"], Json({{"memory", 536870912.0}})) << "sized from the proxy";
  }
}

// Stopped, the app's proxy goes with its replicas: the head's memory is free
// again.
TEST(ProxyReplica, AStopFreesItsMemory) {
  Sim sim("fixed");
  sim.control->deploy(vram_app());
  sim.at(100 * kSecond, [&] { sim.control->stop_app("app"); });
  double during = -1;
  sim.at(90 * kSecond, [&] { during = sim.cluster.node("head")->available.get(kMemory); });
  sim.loop.run(200 * kSecond);
  const double total = sim.cluster.node("head")->total().get(kMemory);
  EXPECT_EQ(during, total - 536870912.0);
  EXPECT_EQ(sim.cluster.node("head")->available.get(kMemory), total);
  EXPECT_EQ(sim.cluster.pending_count(), 0u);
}

// get_gpu_memory_sizing reads the Ray dashboard's node summary
// (proxy_actor.py:379-474@1725d5c), which lists a node only from its first
// report. Hand-worked: the worker registers at 31 s (job at 1 s + 5 + 20 + 5);
// "second", deployed at 27 s with the introspection env cached, is checked
// at 32 s, "third" (deployed at 40 s) at 45 s. With the first report 5 s
// after registration (36 s), the check at 32 s sees no GPU; without a lag
// it sees the node's 40960 MB.
TEST(GpuSizingView, ANodeCountsFromTheDashboardsFirstReport) {
  for (const Duration lag : {Duration{0}, 5 * kSecond}) {
    SCOPED_TRACE(lag);
    SimOptions o;
    o.dashboard_first_report = lag;
    Sim sim("fixed", o);
    sim.control->deploy(vram_app("first"));
    sim.at(27 * kSecond, [&] { sim.control->deploy(vram_app("second", 4000)); });
    sim.at(40 * kSecond, [&] { sim.control->deploy(vram_app("third", 4000)); });
    sim.loop.run(100 * kSecond);
    ASSERT_NE(sim.worker_registered(), nullptr);
    EXPECT_EQ(sim.worker_registered()->t, 31 * kSecond);
    const auto sizing = sim.of("sizing");
    ASSERT_EQ(sizing.size(), 3u);
    EXPECT_EQ(sizing[1].t, 32 * kSecond);
    EXPECT_EQ(sizing[2].t, 45 * kSecond);
    if (lag == 0)
      EXPECT_EQ(sizing[1]["min_gpu_total_mb"], 40960);
    else
      EXPECT_TRUE(sizing[1]["min_gpu_total_mb"].is_null()) << sizing[1]["min_gpu_total_mb"];
    EXPECT_EQ(sizing[2]["min_gpu_total_mb"], 40960);
  }
}

// RayCluster.status (ray_cluster.py:320-356, 1159-1166@fba5ffe) is the
// newest snapshot monitor_cluster took. Hand-worked: passes at 0, 1, 11.005,
// 21.01, 31.015 s; the job goes out at 1 s and its node registers at 31 s
// (queue 5 s, boot 20 s, registration 5 s), where the replica is placed at
// once. A read at 31.01 s gets the pass of 21.01 s, no worker node; a read
// at 35 s the pass of 31.015 s, the node with the replica's 0.01 GPU. Read
// without a kept snapshot, the cluster itself already has the node at 31.01 s.
TEST(StatusServed, AReadBetweenPassesGetsTheLastPassesSnapshot) {
  SimOptions keep;
  keep.keep_status = true;
  Sim sim("fixed", keep);
  Sim live("fixed");
  std::vector<std::pair<std::optional<SimTime>, Json>> reads;
  Json live_read;
  sim.control->deploy(vram_app());
  live.control->deploy(vram_app());
  for (SimTime t : {31010 * kMillisecond, 35 * kSecond})
    sim.at(t, [&] { reads.emplace_back(sim.control->status_from_pass(), sim.control->status()); });
  live.at(31010 * kMillisecond, [&] { live_read = live.control->status(); });
  sim.loop.run(60 * kSecond);
  live.loop.run(60 * kSecond);
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads[0].first, std::optional<SimTime>(21010 * kMillisecond));
  EXPECT_TRUE(reads[0].second["nodes"].empty()) << reads[0].second["nodes"];
  EXPECT_EQ(reads[0].second["cluster"]["used_gpu"], 0);
  EXPECT_EQ(reads[1].first, std::optional<SimTime>(31015 * kMillisecond));
  ASSERT_EQ(reads[1].second["nodes"].size(), 1u) << reads[1].second["nodes"];
  EXPECT_TRUE(reads[1].second["nodes"].contains("node-1"));
  EXPECT_EQ(reads[1].second["cluster"]["used_gpu"], 0.01);
  EXPECT_EQ(live.control->status_from_pass(), std::nullopt);
  EXPECT_TRUE(live_read["nodes"].contains("node-1")) << "the cluster now: " << live_read["nodes"];
  EXPECT_EQ(live_read["cluster"]["used_gpu"], 0.01);
}

// Once the worker's process has exited there is no BioEngine to ask: a read
// gets the cluster as Ray holds it, not the frozen snapshot.
TEST(StatusServed, AfterTheExitAReadGetsTheCluster) {
  SimOptions keep;
  keep.keep_status = true;
  Sim sim("fixed", keep);
  sim.control->deploy(vram_app());
  std::optional<SimTime> before, after;
  sim.at(95 * kSecond, [&] { before = sim.control->status_from_pass(); });
  sim.at(100 * kSecond, [&] { sim.control->shutdown(); });
  sim.at(1000 * kSecond, [&] { after = sim.control->status_from_pass(); });
  sim.loop.run(1100 * kSecond);
  ASSERT_TRUE(sim.control->shut_down());
  ASSERT_LT(*sim.control->shutdown_done_at(), 1000 * kSecond);
  EXPECT_EQ(before, std::optional<SimTime>(91045 * kMillisecond)) << "1 + 9 x 10.005 s";
  EXPECT_EQ(after, std::nullopt);
}

// stop_app cancels the deployment task, and with it the submit task: no
// replica ever goes out.
TEST(SubmitTask, AStopWhileItIsPendingCancelsIt) {
  SimOptions o;
  o.introspection_env_build = 500 * kMillisecond;
  o.submit_worker_start = 10 * kSecond;
  Sim sim("fixed", o);
  sim.control->deploy(vram_app());
  sim.at(8 * kSecond, [&] { sim.control->stop_app("app"); });
  sim.loop.run(300 * kSecond);
  ASSERT_EQ(sim.of("submit_task_submitted").size(), 1u);
  EXPECT_TRUE(sim.of("submit_task_done").empty());
  EXPECT_TRUE(sim.of("replicas_submitted").empty());
  EXPECT_EQ(sim.cluster.pending_count(), 0u);
  EXPECT_EQ(sim.control->apps().at("app").life.state(), AppState::Deleted);
}

// The fifth defect (docs/models.md): Ray lists an actor PENDING_CREATION
// until its constructor returns, so a replica placed on a node and still
// installing its runtime env is pending demand to _check_scale_up in both
// presets. Hand-worked from slurm_workers.py@ad84209/@14b9f29 with this
// Sim's timings: monitor passes at 0 s (start-up), 1 s (the worker loop's
// first) and then every 10.005 s (5 ms of work each); the env for
// introspection builds in 0.5 s, before the 1 s pass, so legacy admits too
// (can_spawn_worker, at 5.5 s) and the pass at 11.005 s scales up for the replica waiting for a
// node; the node joins 5 + 20 + 5 s later (41.005 s) and the replica
// installs there for 110 s (running at 151.005 s). The cooldown ends 60 s
// after a scale-up, so the passes at 71.035 and 131.065 s (60.03 s
// apart) find the replica in creation, below max_workers 4, and each
// submits a job sized from it: two jobs no replica ever uses, each stopped
// once idle past the threshold (300 s). `pending=excludes-installing`
// leaves the replica out: one job.
TEST(PendingDemand, AReplicaInstallingItsEnvScalesUpMoreJobsInBothPresets) {
  SimOptions o;
  o.introspection_env_build = 500 * kMillisecond;
  o.runtime_env_install = 110 * kSecond;
  o.max_workers = 4;
  o.nodes = 4;
  const SimTime pass = 10 * kSecond + 5 * kMillisecond;
  const SimTime first_up = kSecond + pass;
  const SimTime joined = first_up + kQueueWait + kNodeBoot + kRegistration;
  for (const std::string preset : {"legacy", "fixed"})
    for (const std::string pending : {"", ",pending=excludes-installing"}) {
      SCOPED_TRACE(preset + pending);
      Sim sim(preset + pending, o);
      sim.control->deploy(vram_app());
      sim.loop.run(600 * kSecond);
      ASSERT_EQ(sim.of("admission").size(), 1u);
      ASSERT_EQ(sim.of("admission")[0]["admitted"], true);
      const auto placed = sim.of("replica_placed");
      const auto running = sim.of("replica_running");
      ASSERT_EQ(placed.size(), 1u);
      ASSERT_EQ(running.size(), 1u);
      EXPECT_EQ(placed[0].t, joined);
      EXPECT_EQ(running[0].t, joined + 110 * kSecond);
      const auto ups = sim.of("scale_up");
      ASSERT_GE(ups.size(), 1u);
      EXPECT_EQ(ups[0].t, first_up) << "the pass after admission, for the replica waiting for a node";
      EXPECT_FALSE(ups[0]["demand"].empty());
      const auto regs = sim.worker_registrations();
      const auto downs = sim.of("scale_down");
      if (!pending.empty()) {
        EXPECT_EQ(ups.size(), 1u) << "the installing replica is no demand";
        EXPECT_EQ(regs.size(), 1u);
        EXPECT_TRUE(downs.empty());
        continue;
      }
      ASSERT_EQ(ups.size(), 3u) << "a job at every pass past the cooldown while the replica installs";
      EXPECT_EQ(ups[1].t, first_up + 6 * pass);
      EXPECT_EQ(ups[2].t, first_up + 12 * pass);
      for (std::size_t i = 1; i < 3; ++i) {
        EXPECT_GT(ups[i].t, placed[0].t) << "the replica was already placed";
        EXPECT_LT(ups[i].t, running[0].t) << "and still installing";
        EXPECT_EQ(ups[i]["demand"], ups[0]["demand"]) << "sized from the same replica";
        EXPECT_EQ(ups[i]["gpus"], 1);
      }
      ASSERT_EQ(regs.size(), 3u);
      EXPECT_EQ(placed[0]["node"], regs[0]["node"]);
      ASSERT_EQ(downs.size(), 2u) << "the two unused nodes";
      for (std::size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(downs[i]["node"], regs[i + 1]["node"]);
        EXPECT_GT(downs[i].t - regs[i + 1].t, 300 * kSecond);
      }
    }
}

// Replicas placed on a node before its runtime env for the app exists wait
// for the same install: none runs before it, and it is not paid twice.
TEST(RuntimeEnv, EveryReplicaOnANodeWaitsForTheOneInstall) {
  SimOptions o;
  o.runtime_env_install = 100 * kSecond;
  Sim sim("fixed", o);
  AppSpec a = vram_app("app", 4000);
  a.replicas = 3;
  sim.control->deploy(a);
  sim.at(200 * kSecond, [&] {  // a later replica on the same node: the env exists
    AppSpec b = vram_app("app", 4000);
    b.replicas = 4;
    sim.control->deploy(b);
  });
  sim.loop.run(400 * kSecond);
  const SimTime registered = kSecond + kQueueWait + kNodeBoot + kRegistration;
  const auto running = sim.of("replica_running");
  ASSERT_EQ(running.size(), 3u + 4u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(running[i].t, registered + 100 * kSecond) << i;
  // The redeploy's introspection: its env cached, it runs 5 s; the app's env
  // on the node exists, so its replicas run once placed.
  for (std::size_t i = 3; i < running.size(); ++i) EXPECT_EQ(running[i].t, 205 * kSecond) << i;
}

// Each replica_placed event shows the node and device after booking that
// replica, not after the whole batch.
TEST(ReplicaPlaced, FieldsShowTheStateAfterThisReplica) {
  Sim sim("fixed");
  AppSpec a = vram_app("app", 8000);
  a.replicas = 3;
  sim.control->deploy(a);
  sim.loop.run(300 * kSecond);
  const auto placed = sim.of("replica_placed");
  ASSERT_EQ(placed.size(), 3u);
  for (std::size_t i = 0; i < placed.size(); ++i) {
    EXPECT_EQ(placed[i]["node_vram_available_mb"], 40960 - 8000 * static_cast<int>(i + 1)) << i;
    EXPECT_EQ(placed[i]["device_vram_booked_mb"], 8000 * static_cast<int>(i + 1)) << i;
  }
}

// Shutdown: queued deploys are dropped with deploy_cancelled, the deploy in
// introspection never reaches admission, later deploys are ignored, and every
// app ends DELETED, as the real worker undeploys its apps first.
TEST(ShutdownDeploys, QueuedDeploysAreCancelledAndAppsEndDeleted) {
  Sim sim("fixed");
  sim.control->deploy(vram_app("first"));
  sim.control->deploy(vram_app("second"));
  sim.at(5 * kSecond, [&] { sim.control->shutdown(); });
  sim.at(6 * kSecond, [&] { sim.control->deploy(vram_app("late")); });
  sim.loop.run(300 * kSecond);
  EXPECT_TRUE(sim.of("admission").empty());
  EXPECT_EQ(sim.of("introspection_submitted").size(), 1u);
  const auto cancelled = sim.of("deploy_cancelled");
  ASSERT_EQ(cancelled.size(), 2u);
  EXPECT_EQ(cancelled[0]["app"], "first");  // in introspection
  EXPECT_EQ(cancelled[1]["app"], "second");  // queued behind the lock
  for (const auto& c : cancelled) EXPECT_EQ(c.t, 5 * kSecond);
  ASSERT_EQ(sim.of("deploy_ignored").size(), 1u);
  EXPECT_EQ(sim.control->app("late"), nullptr);
  EXPECT_EQ(sim.control->app("first")->life.state(), AppState::Deleted);
  EXPECT_EQ(sim.control->app("second")->life.state(), AppState::Deleted);
  EXPECT_EQ(sim.cluster.pending_count(), 0u);
}

TEST(ShutdownDeploys, RunningAppIsUndeployedBeforeTheWorkersClose) {
  Sim sim("fixed");
  sim.control->deploy(vram_app());
  sim.at(100 * kSecond, [&] { sim.control->shutdown(); });
  sim.loop.run(400 * kSecond);
  std::vector<std::string> path;
  for (const auto& e : sim.of("app_state")) path.push_back(e["to"]);
  EXPECT_EQ(path, (std::vector<std::string>{"DEPLOYING", "RUNNING", "DELETING", "DELETED"}));
  std::optional<SimTime> deleted;
  for (const auto& e : sim.of("app_state"))
    if (e["to"] == "DELETED") deleted = e.t;
  ASSERT_TRUE(deleted);
  const TraceEvent* stop = sim.first("graceful_stop_started");
  ASSERT_NE(stop, nullptr);
  EXPECT_EQ(*deleted, 100 * kSecond);
  EXPECT_LE(*deleted, stop->t);
}

// --- GPU memory in the status: each GPU replica pushes its device's use ------------------------

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

// The status's used_gpu_memory of the only worker, at the loop's time now.
Json worker_gpu_memory(Sim& sim) {
  sim.control->settle_gpu_memory_reports();
  const Json state = get_cluster_state(sim.cluster, sim.loop.now());
  for (const auto& [id, n] : state["nodes"].items())
    if (!n["head"].get<bool>()) return n["used_gpu_memory"];
  return Json();
}

// A worker of two A100s: app a's two replicas share device 0 (8000 MiB each
// as the driver sees it), app b's whole-GPU replica holds 3000 MiB of device
// 1. Each replica pushes its own device's use when it runs and every 10 s
// after (Serve's health check); the node keeps the last push
// (proxy_actor.py:476-490@1725d5c), so the status flips between 16000 and
// 3000 MiB, never the 19000 MiB sum.
TEST(GpuMemoryStatus, LastPushOfAnyReplicaOnTheNodeWins) {
  SimOptions o;
  o.gpus = 2;
  Sim sim("fixed", o);
  // A worker of two GPUs advertises no VRAM_MB (docs/models.md), so both
  // apps ask Ray's num_gpus.
  AppSpec a;
  a.id = "a";
  a.num_gpus = 0.25;
  a.replicas = 2;
  a.observed_vram_mb = 8000;
  sim.control->deploy(a);
  AppSpec b;
  b.id = "b";
  b.num_gpus = 1;
  b.observed_vram_mb = 3000;
  sim.at(34 * kSecond, [&] { sim.control->deploy(b); });
  constexpr std::int64_t kA = 16000 * kMiB, kB = 3000 * kMiB;
  std::map<double, Json> seen;
  for (double t : {32.0, 38.5, 39.5, 41.5, 48.5, 49.5, 51.5})
    sim.at(seconds(t), [&seen, &sim, t] { seen[t] = worker_gpu_memory(sim); });
  sim.loop.run(100 * kSecond);

  const auto ran = sim.of("replica_running");
  ASSERT_EQ(ran.size(), 3u);
  // a: the loop's first pass 1 s + queue 5 + boot 20 + registration 5; b:
  // deployed at 34 s, its introspection 5 s (the env is cached), a node with
  // a free device (in the status of the pass at 31.015 s).
  EXPECT_EQ(ran[0].t, 31 * kSecond);
  EXPECT_EQ(ran[1].t, 31 * kSecond);
  EXPECT_EQ(ran[2]["app"], "b");
  EXPECT_EQ(ran[2].t, 39 * kSecond);
  const auto placed = sim.of("replica_placed");
  ASSERT_EQ(placed.size(), 3u);
  EXPECT_EQ(placed[0]["devices"], Json::array({0}));
  EXPECT_EQ(placed[1]["devices"], Json::array({0}));
  EXPECT_EQ(placed[2]["devices"], Json::array({1}));

  EXPECT_EQ(seen[32.0], kA) << "a's first push at 31 s: its device holds both replicas";
  EXPECT_EQ(seen[38.5], kA) << "a's push at 31 s stands until b runs";
  EXPECT_EQ(seen[39.5], kB) << "b's first push at 39 s";
  EXPECT_EQ(seen[41.5], kA) << "a pushes again at 41 s";
  EXPECT_EQ(seen[48.5], kA);
  EXPECT_EQ(seen[49.5], kB) << "b at 49 s";
  EXPECT_EQ(seen[51.5], kA) << "a at 51 s";
}

// A stopped replica pushes no more: its last value stands 30 s
// (GPU_SAMPLE_STALE_SECONDS, proxy_actor.py:86@1725d5c), then the idle GPU
// node reads "NA".
TEST(GpuMemoryStatus, AfterTheLastReplicaStopsTheValueTurnsNAIn30s) {
  SimOptions o;
  o.runtime_env_install = 30 * kSecond;  // the node registers at 31 s, the replica runs at 61 s
  Sim sim("fixed", o);
  AppSpec a = vram_app("a", 8000);
  a.observed_vram_mb = 8000;
  sim.control->deploy(a);
  std::map<double, Json> seen;
  sim.at(seconds(86), [&] { sim.control->stop_app("a"); });
  for (double t : {60.5, 85.5, 101.0, 111.0, 111.5})
    sim.at(seconds(t), [&seen, &sim, t] { seen[t] = worker_gpu_memory(sim); });
  sim.loop.run(130 * kSecond);
  ASSERT_NE(sim.worker_registered(), nullptr);
  EXPECT_EQ(sim.worker_registered()->t, 31 * kSecond);
  ASSERT_EQ(sim.of("replica_running").size(), 1u);
  EXPECT_EQ(sim.of("replica_running")[0].t, 61 * kSecond);
  EXPECT_EQ(seen[60.5], "NA") << "registered, no GPU replica running yet: no push";
  EXPECT_EQ(seen[85.5], 8000 * kMiB) << "pushes at 61, 71 and 81 s";
  EXPECT_EQ(seen[101.0], 8000 * kMiB) << "the push at 81 s, 20 s old";
  EXPECT_EQ(seen[111.0], 8000 * kMiB) << "30 s old still counts";
  EXPECT_EQ(seen[111.5], "NA");
}

}  // namespace
}  // namespace vramsim
