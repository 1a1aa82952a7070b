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
#include "models/replica_autoscaling.hpp"
#include "scenario/control_config.hpp"

namespace vramsim {

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
