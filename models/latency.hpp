#pragma once
// Latency models: seeded distributions for SLURM queue wait, node boot,
// registration, runtime-env install and replica init. Every draw comes from a
// named stream passed in by the caller.
#include <string>
#include <vector>

#include "engine/random.hpp"
#include "engine/time.hpp"

namespace vramsim {

struct LatencyModel {
  enum class Kind { Fixed, Exponential, Lognormal, Uniform, Empirical };
  Kind kind = Kind::Fixed;
  Duration value = 0;    // fixed
  Duration mean = 0;     // exponential
  Duration median = 0;   // lognormal: exp(mu)
  double sigma = 0;      // lognormal
  Duration lo = 0, hi = 0;          // uniform
  std::vector<Duration> samples;    // empirical: drawn uniformly

  static LatencyModel fixed(Duration d) { LatencyModel m; m.value = d; return m; }
  // One draw, rounded to `resolution`: whole milliseconds for the
  // control plane's phases (short, stable traces), the engine's microsecond
  // for a request's service time.
  Duration sample(RandomStream& rng, Duration resolution = kMillisecond) const;
  std::string describe() const;
  // Maximum-likelihood lognormal fit of observed latencies (all > 0).
  static LatencyModel fit_lognormal(const std::vector<Duration>& observed);
};

}  // namespace vramsim
