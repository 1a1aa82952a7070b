#include "control/router.hpp"

namespace vramsim {

void Router::call(const std::string& app_id, const Json& payload) {
  const std::uint64_t call_id = ++calls_;
  auto it = apps_.find(app_id);
  const ReplicaRecord* target = nullptr;
  std::size_t index = 0;
  if (it != apps_.end() && !ctx_.exited)
    for (std::size_t i = 0; i < it->second.replicas.size() && !target; ++i)
      if (it->second.replicas[i].life.state() == ReplicaState::Running) { target = &it->second.replicas[i]; index = i; }
  const Node* n = target ? ctx_.cluster.node(target->node) : nullptr;
  if (!n || !n->alive()) {
    ctx_.trace.record(ctx_.exec.now(), "call_failed",
                      {{"app", app_id}, {"call", call_id}, {"error", "no running replica of " + app_id}});
    return;
  }
  const std::string replica = app_id + "#" + std::to_string(index);
  const SimTime sent = ctx_.exec.now();
  ctx_.trace.record(sent, "call_sent", {{"app", app_id}, {"call", call_id}, {"replica", replica}, {"node", n->id}});
  auto answered = [this, app_id, call_id, replica, sent](Json result) {
    const bool ok = !(result.is_object() && result.contains("error"));
    ctx_.trace.record(ctx_.exec.now(), "call_result",
                      {{"app", app_id}, {"call", call_id}, {"replica", replica}, {"ok", ok},
                       {"latency_us", ctx_.exec.now() - sent}, {"result", std::move(result)}});
  };
  ctx_.backend.call_replica(n->spec.slurm_job_id, replica, payload, std::move(answered));
}

}  // namespace vramsim
