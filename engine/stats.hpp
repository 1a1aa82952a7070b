#pragma once
// Order statistics shared by the run's metrics and the reports.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace vramsim {

// The nearest-rank percentile: the smallest value with at least p% of the
// values at or below it (p in [0, 100]); nullopt for no values. O(n log n).
inline std::optional<double> nearest_rank_percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100 * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

}  // namespace vramsim
