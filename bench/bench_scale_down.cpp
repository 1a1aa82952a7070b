// N warm, idle workers scaled down at once: the control plane and the
// simulated partition alone (no runner, no trace sink), from building the
// warm cluster to the end of a 15 min horizon, by which every worker has
// been stopped and its job cancelled. The workers monitor's per-event cost
// should not grow with N: targets N=1e4 <= 1 s, N=1e5 <= 12 s, and at most
// 11x for ten times the nodes. `tools/bench-scaledown --control-plane` runs
// each size in a process of its own and prints the growth; without the
// flag it runs the same case as a scenario through `vramsim run`.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "backends/sim/sim_slurm_backend.hpp"
#include "control/control_plane.hpp"
#include "engine/event_loop.hpp"

namespace vramsim {
namespace {

// Wall seconds of the phases of one run.
struct Phases {
  double warm_s = 0;        // building the cluster until every warm worker registered
  double scale_down_s = 0;  // the rest of the horizon: the checks, N stops, N cancels
  double teardown_s = 0;    // freeing the simulation's state afterwards
  std::uint64_t events = 0;  // events the loop ran: should grow as N does
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::size_t scale_down_run(int nodes, Phases& phases) {
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t cancelled = 0;
  std::chrono::steady_clock::time_point t2;
  {
  EventLoop loop;
  RandomStreams rng{1};
  TraceRecorder trace;
  ClusterState cluster;
  NodeSpec head;
  head.ip = "10.0.0.254";
  head.head = true;
  head.resources.set(kCPU, 0);
  cluster.add_node(std::move(head), 0);
  SimSlurmConfig sc;
  PartitionNodeType t;
  t.count = nodes;
  sc.nodes = {t};
  PolicySet policies = resolve_policies("fixed");
  SimSlurmBackend backend(loop, rng, trace, sc, policies.advertisement);
  ControlConfig cfg;
  cfg.autoscaler.max_workers = nodes;
  ControlPlane control(loop, backend, cluster, trace, rng, std::move(policies), cfg);
  WorkerJobSize size;
  size.gpus = 1;
  size.cpus = 8;
  size.mem_per_cpu_gb = 16;
  for (int i = 0; i < nodes; ++i) backend.start_warm_worker(size);
  control.start();
  loop.run(1 * kSecond);  // the warm workers register at t=0
  phases.warm_s = seconds_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  loop.run(15 * kMinute);
  phases.scale_down_s = seconds_since(t1);
  phases.events = loop.events_run();
  for (const SimJob& job : backend.jobs())
    if (job.life.state() == JobState::Cancelled) ++cancelled;
  t2 = std::chrono::steady_clock::now();
  }
  phases.teardown_s = seconds_since(t2);
  if (cancelled != static_cast<std::size_t>(nodes))
    throw std::runtime_error("bench_scale_down: " + std::to_string(cancelled) + " of " + std::to_string(nodes) +
                             " jobs cancelled");
  return cancelled;
}

// The time is the simulation's, warm start and scale-down (the targets'
// measure); freeing its state afterwards is the counter teardown_ms.
void BM_ScaleDownWarmIdle(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  Phases phases;
  for (auto _ : state) {
    benchmark::DoNotOptimize(scale_down_run(nodes, phases));
    state.SetIterationTime(phases.warm_s + phases.scale_down_s);
  }
  state.counters["nodes"] = nodes;
  state.counters["warm_ms"] = phases.warm_s * 1e3;
  state.counters["scale_down_ms"] = phases.scale_down_s * 1e3;
  state.counters["teardown_ms"] = phases.teardown_s * 1e3;
  state.counters["events_per_node"] = static_cast<double>(phases.events) / nodes;
}
BENCHMARK(BM_ScaleDownWarmIdle)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace vramsim

BENCHMARK_MAIN();
