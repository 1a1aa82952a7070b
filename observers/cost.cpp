#include "observers/cost.hpp"

#include "models/gpu_models.hpp"

namespace vramsim {

void Cost::derive(RunResult& result) {
  RunMetrics& m = result.metrics;
  if (m.gpu_hours_by_model.empty()) return;
  const auto& prices = ctx().scenario.gpu_prices;
  double cost = 0;
  for (const auto& [model, hours] : m.gpu_hours_by_model) {
    double price = 0;
    if (auto it = prices.find(model); it != prices.end()) price = it->second;
    else if (const GpuPrice* p = find_gpu_price(model)) price = p->usd_per_gpu_hour;
    else { m.unpriced.push_back(model); continue; }
    cost += hours * price;
  }
  if (m.unpriced.empty()) m.cost_usd = cost;
}

}  // namespace vramsim
