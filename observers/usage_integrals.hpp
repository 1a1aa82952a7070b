#pragma once
// The cluster's use integrated over the run, stepping at trace events
// (between two events the state after the earlier one holds): registered
// workers with nothing placed, GPUs booked, VRAM_MB booked and advertised,
// and (where the backend measures device memory) devices seen holding
// memory. Fills idle_node_seconds, gpu_hours_booked, gpu_hours_observed and
// vram_utilisation.
#include "observers/run_observer.hpp"

namespace vramsim {

class UsageIntegrals final : public RunObserver {
 public:
  TraceKindSet kinds() const override { return every_kind(); }
  void on_event(const TraceEvent& ev) override;
  void close(SimTime end) override { step(end); }  // the run's end counts as one more step
  void measure(RunResult& result) override;

 private:
  void step(SimTime t);
  SimTime last_t_ = 0;
  std::size_t idle_nodes_ = 0, gpus_observed_ = 0;
  // Booked and advertised amounts over alive nodes (head included) now, and
  // their integrals over time.
  double gpus_booked_ = 0, vram_booked_mb_ = 0, vram_advertised_mb_ = 0;
  double idle_node_seconds_ = 0, gpu_booked_seconds_ = 0, vram_booked_mb_seconds_ = 0;
  double vram_advertised_mb_seconds_ = 0, gpu_observed_seconds_ = 0;
};

}  // namespace vramsim
