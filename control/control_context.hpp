#pragma once
// What the control plane's modules share: its configuration, the world it
// acts on (the executor, the cluster backend, the scheduler's cluster state,
// the trace, the random streams, the policy models) and the run state every
// module reads (shutdown begun, process exited). One per ControlPlane, which
// owns it and outlives every module holding a reference to it.
#include <optional>

#include "backends/cluster_backend.hpp"
#include "engine/cluster_state.hpp"
#include "engine/executor.hpp"
#include "engine/random.hpp"
#include "engine/trace.hpp"
#include "models/latency.hpp"
#include "models/policy_set.hpp"

namespace vramsim {

struct ControlConfig {
  bool slurm_mode = true;
  AutoscalerConfig autoscaler;
  Duration monitor_tick = 10 * kSecond;   // the monitor loop's sleep after each pass
  // Time one monitor pass takes before its sleep starts: passes begin every
  // monitor_tick + work, never on an exact multiple of the tick.
  LatencyModel monitor_work = LatencyModel::fixed(5 * kMillisecond);
  Duration creation_poll = 5 * kSecond;
  Duration introspection_duration = 15 * kSecond;  // the task's run time once placed on a node
  Duration introspection_check_after = 15 * kSecond;  // submission to the resource check
  ResourceSet introspection_request{{kCPU, 1.0}};
  Duration grace_period = 60 * kSecond;   // each graceful-stop step's limit
  Duration stop_poll = 3 * kSecond;
  Duration cancel_poll = 1 * kSecond;
  std::size_t status_history = 100;
  Duration memory_sample_period = 10 * kSecond;
  LatencyModel runtime_env_install = LatencyModel::fixed(0);
  LatencyModel replica_init = LatencyModel::fixed(0);
};

struct ControlContext {
  ControlContext(Executor& e, ClusterBackend& b, ClusterState& c, TraceRecorder& t, RandomStreams& r, PolicySet p,
                 ControlConfig config)
      : exec(e), backend(b), cluster(c), trace(t), rng(r), policies(std::move(p)), cfg(std::move(config)) {}

  Executor& exec;
  ClusterBackend& backend;
  ClusterState& cluster;
  TraceRecorder& trace;
  RandomStreams& rng;
  PolicySet policies;
  ControlConfig cfg;
  bool shutting_down = false;  // shutdown began: no deploy, introspection or admission starts
  bool exited = false;         // shutdown done: the process is gone, and its tasks with it
  std::optional<SimTime> shutdown_done_at;
};

}  // namespace vramsim
