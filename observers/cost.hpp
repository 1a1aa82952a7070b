#pragma once
// The run's cost: the GPU-hours the worker jobs held, by GPU model (the
// world's account), times the price table (models/gpu_models.hpp) or the
// scenario's gpu_prices_usd_per_hour; none where a model has no price
// (listed in RunMetrics::unpriced).
#include "observers/run_observer.hpp"

namespace vramsim {

class Cost final : public RunObserver {
 public:
  void derive(RunResult& result) override;
};

}  // namespace vramsim
