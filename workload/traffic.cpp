#include "workload/traffic.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace vramsim {

namespace {
constexpr double kTwoPi = 6.283185307179586476925286766559;
}

double TrafficSpec::peak_rate() const {
  switch (process) {
    case Process::Poisson: return rate_per_s;
    case Process::Diurnal: return mean_rate_per_s * (peak_to_mean ? *peak_to_mean : 1 + amplitude);
    case Process::Piecewise: {
      double m = 0;
      for (const auto& p : points) m = std::max(m, p.rate_per_s);
      return m;
    }
    case Process::Trace: return 0;
  }
  return 0;
}

double TrafficSpec::rate_at(Duration t) const {
  switch (process) {
    case Process::Poisson: return rate_per_s;
    case Process::Diurnal: {
      const double s = std::sin(kTwoPi * to_seconds(t - phase) / to_seconds(period));
      if (peak_to_mean) return mean_rate_per_s * *peak_to_mean * std::pow((1 + s) / 2, power);
      return mean_rate_per_s * (1 + amplitude * s);
    }
    case Process::Piecewise: {
      if (points.empty()) return 0;
      if (t <= points.front().at) return points.front().rate_per_s;
      auto it = std::upper_bound(points.begin(), points.end(), t,
                                 [](Duration x, const TrafficPoint& p) { return x < p.at; });
      if (it == points.end()) return points.back().rate_per_s;
      const TrafficPoint& b = *it;
      const TrafficPoint& a = *(it - 1);
      if (step || b.at == a.at) return a.rate_per_s;
      const double f = static_cast<double>(t - a.at) / static_cast<double>(b.at - a.at);
      return a.rate_per_s + f * (b.rate_per_s - a.rate_per_s);
    }
    case Process::Trace: return 0;
  }
  return 0;
}

double diurnal_power(double peak_to_mean) {
  if (!(peak_to_mean >= 1) || !std::isfinite(peak_to_mean))
    throw std::invalid_argument("diurnal_power: expected a peak-to-mean ratio of at least 1");
  // Peak over mean for power k: increasing from 1 at k = 0.
  const auto ratio = [](double k) {
    return std::exp(0.5 * std::log(std::acos(-1.0)) + std::lgamma(k + 1) - std::lgamma(k + 0.5));
  };
  double lo = 0, hi = 1;
  while (ratio(hi) < peak_to_mean) lo = hi, hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-14 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (ratio(mid) < peak_to_mean ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

std::optional<TrafficSource::Arrival> TrafficSource::next() {
  if (spec_.max_requests && emitted_ >= *spec_.max_requests) return std::nullopt;
  if (spec_.process == TrafficSpec::Process::Trace) {
    if (index_ >= spec_.requests.size()) return std::nullopt;
    const TraceRequest& r = spec_.requests[index_++];
    ++emitted_;
    return Arrival{r.at, r.service};
  }
  const double peak = spec_.peak_rate();
  if (peak <= 0) return std::nullopt;
  const bool constant = spec_.process == TrafficSpec::Process::Poisson;
  // A piecewise rate that is 0 from its last point on ends the traffic.
  const bool ends = spec_.process == TrafficSpec::Process::Piecewise && spec_.points.back().rate_per_s <= 0;
  const double horizon_s = ends ? to_seconds(spec_.points.back().at) : INFINITY;
  for (;;) {
    t_s_ += rng_.exponential(1.0 / peak);
    if (t_s_ > horizon_s || t_s_ > 1e12) return std::nullopt;
    const Duration at = static_cast<Duration>(std::llround(t_s_ * 1e6));
    if (constant || rng_.uniform01() * peak < spec_.rate_at(at)) {
      ++emitted_;
      return Arrival{at, -1};
    }
  }
}

}  // namespace vramsim
