#pragma once
// Request traffic for a serving app: when requests arrive at its handle and,
// for a trace, the work each one brings. Processes: `poisson` (a constant
// rate), `piecewise` (a rate over time, linear between points or held as
// steps), `diurnal` (a sinusoid around a mean) and `trace` (recorded
// arrivals). The time-varying ones are non-homogeneous Poisson processes
// drawn by thinning (Lewis and Shedler): candidates at the peak rate, each
// kept with probability rate(t) / peak. docs/serving.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/random.hpp"
#include "engine/time.hpp"

namespace vramsim {

struct TrafficPoint {
  Duration at = 0;       // from the traffic's start
  double rate_per_s = 0;
};

// One recorded request: when it arrives (from the trace's first) and the
// work it took there (-1: none recorded; drawn from service_time).
struct TraceRequest {
  Duration at = 0;
  Duration service = -1;
};

struct TrafficSpec {
  enum class Process { Poisson, Piecewise, Diurnal, Trace };
  Process process = Process::Poisson;
  double rate_per_s = 1;                 // poisson
  std::vector<TrafficPoint> points;      // piecewise, by time; the last rate holds after
  bool step = false;                     // piecewise: hold each rate until the next point
  double mean_rate_per_s = 1;            // diurnal: mean x (1 + amplitude sin(2 pi (t - phase) / period))
  double amplitude = 0.5;                // in [0, 1]
  // diurnal, the raised form, for any peak: mean x peak_to_mean x
  // ((1 + sin(2 pi (t - phase) / period)) / 2)^power, power =
  // diurnal_power(peak_to_mean) so the mean over a period is the mean.
  std::optional<double> peak_to_mean;    // in [1, 100]
  double power = 1;
  Duration period = 24LL * 3600 * kSecond;
  Duration phase = 0;
  std::vector<TraceRequest> requests;    // trace, by time (scaled already)
  std::string source;                    // trace: what it was read from, for messages
  std::optional<Duration> start;         // scenario time; none: the app's first deploy
  std::optional<Duration> end;           // scenario time; none: the horizon
  std::optional<std::uint64_t> max_requests;  // stop after this many arrivals

  double peak_rate() const;
  double rate_at(Duration t) const;      // t from the traffic's start
};

// The power k of the raised diurnal form whose peak is `peak_to_mean` times
// its mean: the mean of ((1 + sin x) / 2)^k over a period is
// Gamma(k + 1/2) / (sqrt(pi) Gamma(k + 1)) (Wallis), so k solves
// sqrt(pi) Gamma(k + 1) / Gamma(k + 1/2) = peak_to_mean. 0 at 1 (flat), 1 at
// 2 (the sinusoid of amplitude 1), about peak_to_mean^2 / pi for large ones.
double diurnal_power(double peak_to_mean);

// Draws a traffic's arrivals in order, each on demand.
class TrafficSource {
 public:
  TrafficSource(const TrafficSpec& spec, RandomStream& rng) : spec_(spec), rng_(rng) {}
  struct Arrival {
    Duration at = 0;        // from the traffic's start
    Duration service = -1;
  };
  // The next arrival, or none once the traffic has no more (a trace ran
  // out, max_requests reached, a rate of 0 from here on).
  std::optional<Arrival> next();

 private:
  const TrafficSpec& spec_;
  RandomStream& rng_;
  double t_s_ = 0;            // last candidate, seconds from the start
  std::size_t index_ = 0;     // trace position
  std::uint64_t emitted_ = 0;
};

}  // namespace vramsim
