#include "models/latency.hpp"

#include <Eigen/Core>
#include <cmath>
#include <stdexcept>

namespace vramsim {

Duration LatencyModel::sample(RandomStream& rng, Duration resolution) const {
  double us = 0;
  switch (kind) {
    case Kind::Fixed: return value;
    case Kind::Exponential: us = rng.exponential(static_cast<double>(mean)); break;
    case Kind::Lognormal: us = rng.lognormal(std::log(static_cast<double>(median)), sigma); break;
    case Kind::Uniform: us = rng.uniform(static_cast<double>(lo), static_cast<double>(hi)); break;
    case Kind::Empirical:
      return samples.empty() ? 0 : samples[rng.index(samples.size())];
  }
  // A heavy tail (lognormal with a large sigma) can draw beyond any run;
  // a year caps it far from overflow and far beyond any horizon.
  constexpr double kMaxDrawUs = 365.0 * 24 * 3600 * 1e6;
  if (!(us >= 0)) us = 0;
  if (us > kMaxDrawUs) us = kMaxDrawUs;
  if (resolution <= 1) return static_cast<Duration>(std::llround(us));
  return static_cast<Duration>(std::llround(us / static_cast<double>(resolution))) * resolution;
}

std::string LatencyModel::describe() const {
  switch (kind) {
    case Kind::Fixed: return "fixed(" + format_duration(value) + ")";
    case Kind::Exponential: return "exponential(mean=" + format_duration(mean) + ")";
    case Kind::Lognormal: return "lognormal(median=" + format_duration(median) + ", sigma=" + std::to_string(sigma) + ")";
    case Kind::Uniform: return "uniform(" + format_duration(lo) + ", " + format_duration(hi) + ")";
    case Kind::Empirical: return "empirical(" + std::to_string(samples.size()) + " samples)";
  }
  return "?";
}

LatencyModel LatencyModel::fit_lognormal(const std::vector<Duration>& observed) {
  if (observed.size() < 2) throw std::invalid_argument("fit_lognormal needs at least two samples");
  Eigen::ArrayXd logs(static_cast<Eigen::Index>(observed.size()));
  for (std::size_t i = 0; i < observed.size(); ++i) {
    if (observed[i] <= 0) throw std::invalid_argument("fit_lognormal: samples must be positive");
    logs[static_cast<Eigen::Index>(i)] = std::log(static_cast<double>(observed[i]));
  }
  const double mu = logs.mean();
  const double var = (logs - mu).square().sum() / static_cast<double>(logs.size());
  LatencyModel m;
  m.kind = Kind::Lognormal;
  m.median = static_cast<Duration>(std::llround(std::exp(mu)));
  m.sigma = std::sqrt(var);
  return m;
}

}  // namespace vramsim
