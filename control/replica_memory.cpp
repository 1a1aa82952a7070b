#include "control/replica_memory.hpp"

namespace vramsim {

void ReplicaMemory::running(const AppRecord& app, DemandId demand, std::size_t index) {
  const ReplicaRecord& r = app.replicas[index];
  if (r.device < 0) return;  // no GPU: no sampler, no push
  const SimTime now = ctx_.exec.now();
  settle(r.node, now);
  running_[demand] = Reporter{&app, index, now};
  on_node_[r.node].insert(demand);
  // The first health check's push, with this replica on its device.
  ctx_.cluster.report_gpu_memory(r.node, device_used_bytes(r.node, r.device), now);
}

void ReplicaMemory::stopped(DemandId demand) {
  auto it = running_.find(demand);
  if (it == running_.end()) return;
  const NodeId node = record(it->second).node;
  settle(node, ctx_.exec.now());
  running_.erase(it);
  auto on = on_node_.find(node);
  on->second.erase(demand);
  if (on->second.empty()) on_node_.erase(on);
  // The node's last push stands until it is stale or another replica pushes.
}

void ReplicaMemory::resizing(const AppRecord& app) {
  // Settling a node twice at one time is a no-op (its report is that late).
  for (const auto& r : app.replicas)
    if (running_.count(r.demand)) settle(r.node, ctx_.exec.now());
}

void ReplicaMemory::settle() {
  const SimTime now = ctx_.exec.now();
  for (const auto& [node, on] : on_node_) settle(node, now);
}

void ReplicaMemory::sample() {
  if (!ctx_.backend.measures_memory()) return;  // the declared sizes need no pass
  for (const Node* n : ctx_.cluster.alive_nodes())
    for (const auto& d : n->devices())
      if (auto o = ctx_.backend.observed_memory(n->spec.slurm_job_id, d.index))
        ctx_.cluster.observe_device_memory(n->id, d.index, o->used_bytes, o->at);
  settle();
}

void ReplicaMemory::settle(const NodeId& node, SimTime now) {
  auto on = on_node_.find(node);
  if (on == on_node_.end()) return;
  const Duration period = ctx_.cfg.health_check_period;
  // Each replica's last push at or before now; the latest one is the node's
  // (a tie: the replica RUNNING later, then the later demand).
  const Reporter* last = nullptr;
  SimTime last_at = 0;
  for (DemandId demand : on->second) {
    const Reporter& r = running_.at(demand);
    const SimTime at = r.since + (now - r.since) / period * period;
    if (!last || at > last_at || (at == last_at && r.since >= last->since)) {
      last = &r;
      last_at = at;
    }
  }
  const Node* n = ctx_.cluster.node(node);
  if (!last || !n) return;
  // A push no later than the node's report is already there.
  if (n->gpu_memory_report && last_at <= n->gpu_memory_report->at) return;
  ctx_.cluster.report_gpu_memory(node, device_used_bytes(node, record(*last).device), last_at);
}

std::int64_t ReplicaMemory::device_used_bytes(const NodeId& node, int device) const {
  if (ctx_.backend.measures_memory())
    if (const Node* n = ctx_.cluster.node(node))
      if (auto o = ctx_.backend.observed_memory(n->spec.slurm_job_id, device)) return o->used_bytes;
  std::int64_t used = 0;
  if (auto on = on_node_.find(node); on != on_node_.end())
    for (DemandId demand : on->second) {
      const Reporter& r = running_.at(demand);
      const AppRecord& app = *r.app;
      const ReplicaRecord& rec = record(r);
      if (rec.device != device || rec.life.state() != ReplicaState::Running) continue;
      const auto mb = replica_device_mb(app.spec).value_or(app.sizing.vram_mb.value_or(0));
      used += mb * 1024 * 1024;
    }
  return used;
}

}  // namespace vramsim
