#include "control/control_plane.hpp"

namespace vramsim {

ControlPlane::ControlPlane(Executor& exec, ClusterBackend& backend, ClusterState& cluster,
                           TraceRecorder& trace, RandomStreams& rng, PolicySet policies, ControlConfig cfg)
    : ctx_(exec, backend, cluster, trace, rng, std::move(policies), std::move(cfg)),
      memory_(ctx_),
      apps_(ctx_, memory_),
      router_(ctx_, apps_.apps()),
      autoscaler_(ctx_, apps_, router_),
      monitor_(ctx_, memory_),
      shutdown_(ctx_, apps_, monitor_),
      status_(ctx_, memory_) {
  backend.set_listener(this);
  apps_.count_worker_jobs_with([this] { return monitor_.worker_jobs(); });
  apps_.scan_status_nodes_with([this] { return monitor_.status_nodes(); });
  monitor_.after_pass = [this] { apps_.monitor_applications(); };
  monitor_.after_status_sample = [this] { status_.pass(); };
  router_.before_change = [this] { autoscaler_.wake(); };
  apps_.on_replica_running = [this](const AppRecord& a, std::size_t i) { router_.replica_running(a, i); };
  apps_.on_replica_gone = [this](const AppRecord& a, std::size_t i, bool lost) { router_.replica_gone(a, i, lost); };
}

void ControlPlane::start() { monitor_.start(); }

void ControlPlane::deploy(const AppSpec& app) {
  autoscaler_.deployed(app);
  apps_.deploy(app);
}

void ControlPlane::node_registered(NodeSpec spec) {
  const std::string job = spec.slurm_job_id;
  if (!monitor_.register_node(std::move(spec))) return;
  if (const Node* n = ctx_.cluster.node_for_job(job)) apps_.node_registered(n->id);
  apps_.place_pending();
}

void ControlPlane::node_lost(const std::string& job_id, const std::string& reason) {
  auto lost = monitor_.remove_node(job_id, reason);
  if (!lost) return;
  apps_.node_lost(lost->node, lost->demands);
  if (!ctx_.exited) apps_.place_pending();
}

}  // namespace vramsim
