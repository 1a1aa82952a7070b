#include "control/replica_memory.hpp"

#include <vector>

namespace vramsim {

void ReplicaMemory::running(const AppRecord& app, DemandId demand, std::size_t index) {
  const ReplicaRecord& r = app.replicas[index];
  running_[demand] = RunningRef{&app, index};
  if (r.device < 0) return;
  running_on_[{r.node, r.device}].insert(demand);
  dirty_.insert({r.node, r.device});
}

void ReplicaMemory::stopped(DemandId demand) {
  auto it = running_.find(demand);
  if (it == running_.end()) return;
  const ReplicaRecord& r = it->second.app->replicas[it->second.index];
  if (r.device >= 0) {
    const DeviceKey key{r.node, r.device};
    auto on = running_on_.find(key);
    on->second.erase(demand);
    if (on->second.empty()) running_on_.erase(on);
    dirty_.insert(key);
  }
  running_.erase(it);
}

void ReplicaMemory::changed(const AppRecord& app) {
  for (const auto& r : app.replicas)
    if (r.device >= 0 && running_.count(r.demand)) dirty_.insert({r.node, r.device});
}

void ReplicaMemory::sample() {
  // The node agent's report of what the driver sees: the declared observed
  // peak of each running replica on its device. Only devices whose replicas
  // changed are read again; the sweep marks every device observed now.
  std::vector<ClusterState::DeviceReading> changed;
  changed.reserve(dirty_.size());
  for (const auto& key : dirty_) {
    std::int64_t used = 0;
    if (auto on = running_on_.find(key); on != running_on_.end())
      for (DemandId demand : on->second) {
        const RunningRef& ref = running_.at(demand);
        const AppRecord& app = *ref.app;
        if (app.replicas[ref.index].life.state() != ReplicaState::Running) continue;
        const auto mb = replica_device_mb(app.spec).value_or(app.sizing.vram_mb.value_or(0));
        used += mb * 1024 * 1024;
      }
    changed.push_back({key.first, key.second, used});
  }
  dirty_.clear();
  ctx_.cluster.sweep_device_memory(ctx_.exec.now(), changed);
  // A backend that measures driver memory (live agents) overrides the
  // declared figures where it has a reading.
  if (ctx_.backend.measures_memory())
    for (const Node* n : ctx_.cluster.alive_nodes())
      for (const auto& d : n->devices())
        if (auto o = ctx_.backend.observed_memory(n->spec.slurm_job_id, d.index))
          ctx_.cluster.observe_device_memory(n->id, d.index, o->used_bytes, o->at);
}

}  // namespace vramsim
