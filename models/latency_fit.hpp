#pragma once
// Fitting latency models to observed durations: each supported family
// (fixed, exponential, lognormal, uniform) by maximum likelihood, compared by
// AIC, the observed samples kept beside as the empirical model. Pure
// functions; `vramsim calibrate` feeds them the phases of live traces.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/latency.hpp"

namespace vramsim {

// Below this many samples a phase is not fitted (a 2-parameter family needs
// a few points beyond its parameters before AIC means anything).
constexpr std::size_t kMinFitSamples = 5;

// Too few samples, or samples a fit cannot take (negative durations).
class FitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct CandidateFit {
  std::string family;          // "fixed", "exponential", "lognormal", "uniform"
  std::optional<LatencyModel> model;  // nullopt: the family cannot describe the samples
  double log_likelihood = 0;   // of the samples in seconds
  int parameters = 0;
  std::optional<double> aic;   // 2k - 2 ln L; nullopt where the family does not apply
  std::string why_not;         // when it does not apply
};

struct LatencyFit {
  std::size_t n = 0;
  std::size_t censored = 0;              // right-censored samples the fit took too
  std::vector<CandidateFit> candidates;  // in the order above
  std::string chosen;                    // the family with the lowest AIC
  LatencyModel model;                    // the chosen family's fit
  LatencyModel empirical;                // the samples themselves
};

// Closed-form maximum-likelihood fits (samples in microseconds).
LatencyModel fit_exponential(const std::vector<Duration>& samples);
LatencyModel fit_uniform(const std::vector<Duration>& samples);
// Lognormal: LatencyModel::fit_lognormal.

// Fits every family and picks one by AIC. Identical samples are a fixed
// latency (every continuous family degenerates there). Throws FitError with
// fewer than `min_samples` samples or a negative one.
//
// `censored`: right-censored durations, known only to have lasted at least
// that long (a queue wait whose job was cancelled before it started).
// Dropping them biases a fit low; the exponential and the lognormal take
// them by censored maximum likelihood (the exponential in closed form, the
// lognormal by EM on the log scale). The uniform and the fixed families do
// not apply where there are any, and the empirical model holds the
// completed samples only.
LatencyFit fit_latency(const std::vector<Duration>& samples, std::size_t min_samples = kMinFitSamples,
                       const std::vector<Duration>& censored = {});
// The censored fits on their own (samples and censored in microseconds).
LatencyModel fit_exponential_censored(const std::vector<Duration>& samples, const std::vector<Duration>& censored);
struct LognormalFit {
  double mu = 0, sigma = 0;  // of ln(seconds)
  double log_likelihood = 0;
};
// Needs samples > 0; censored values of 0 carry no information and are
// skipped. Throws FitError where fewer than two samples differ.
LognormalFit fit_lognormal_censored(const std::vector<Duration>& samples, const std::vector<Duration>& censored);

}  // namespace vramsim
