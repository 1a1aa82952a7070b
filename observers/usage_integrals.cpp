#include "observers/usage_integrals.hpp"

namespace vramsim {

void UsageIntegrals::on_event(const TraceEvent& ev) { step(ev.t); }

void UsageIntegrals::step(SimTime t) {
  // The state after the previous event held until this one.
  const double dt = to_seconds(t - last_t_);
  idle_node_seconds_ += dt * static_cast<double>(idle_nodes_);
  gpu_booked_seconds_ += dt * gpus_booked_;
  vram_booked_mb_seconds_ += dt * vram_booked_mb_;
  vram_advertised_mb_seconds_ += dt * vram_advertised_mb_;
  gpu_observed_seconds_ += dt * static_cast<double>(gpus_observed_);
  last_t_ = t;
  // Kept up to date by the cluster state: O(1) per event, not a walk over
  // every node.
  const ClusterState& cluster = ctx().cluster;
  idle_nodes_ = cluster.idle_worker_count();
  const ClusterState::Totals& tot = cluster.totals();
  gpus_booked_ = to_double(tot.gpu_used);
  vram_advertised_mb_ = to_double(tot.vram_total);
  vram_booked_mb_ = to_double(tot.vram_used);
  gpus_observed_ = 0;
  if (ctx().backend.measures_memory())  // live runs: a handful of nodes
    for (const Node* n : cluster.alive_nodes())
      for (const auto& d : n->devices())
        if (d.observed_used_bytes.value_or(0) > 0) ++gpus_observed_;
}

void UsageIntegrals::measure(RunResult& result) {
  RunMetrics& m = result.metrics;
  m.idle_node_seconds = idle_node_seconds_;
  m.gpu_hours_booked = gpu_booked_seconds_ / 3600;
  if (ctx().backend.measures_memory()) m.gpu_hours_observed = gpu_observed_seconds_ / 3600;
  if (vram_advertised_mb_seconds_ > 0) m.vram_utilisation = vram_booked_mb_seconds_ / vram_advertised_mb_seconds_;
}

}  // namespace vramsim
