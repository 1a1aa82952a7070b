#pragma once
// GPU use sampled at evenly spaced times over the horizon (the middle of
// each of Scenario::utilisation_samples slices; a workload's scenarios take
// them): allocation, VRAM booked and the FGD paper's fragmentation, averaged
// at the end against the run's task mix (docs/workloads-openb.md).
#include "analysis/fragmentation.hpp"
#include "observers/run_observer.hpp"

namespace vramsim {

class UtilisationSamples final : public RunObserver {
 public:
  void start() override;
  void measure(RunResult& result) override;

 private:
  UtilisationSampler sampler_;
};

}  // namespace vramsim
