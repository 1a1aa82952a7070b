#include "models/latency_fit.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

namespace vramsim {

namespace {

constexpr double kLog2Pi = 1.8378770664093453;  // ln(2 pi)

// Likelihoods are of the samples in seconds: every family is scored on the
// same unit, so their AICs compare.
Eigen::ArrayXd in_seconds(const std::vector<Duration>& samples) {
  Eigen::ArrayXd x(static_cast<Eigen::Index>(samples.size()));
  for (std::size_t i = 0; i < samples.size(); ++i) x[static_cast<Eigen::Index>(i)] = to_seconds(samples[i]);
  return x;
}

CandidateFit not_applicable(const std::string& family, int k, const std::string& why) {
  CandidateFit c;
  c.family = family;
  c.parameters = k;
  c.why_not = why;
  return c;
}

CandidateFit scored(const std::string& family, const LatencyModel& m, int k, double log_l) {
  CandidateFit c;
  c.family = family;
  c.model = m;
  c.parameters = k;
  c.log_likelihood = log_l;
  c.aic = 2.0 * k - 2.0 * log_l;
  return c;
}

}  // namespace

LatencyModel fit_exponential(const std::vector<Duration>& samples) {
  if (samples.empty()) throw FitError("fit_exponential needs at least one sample");
  double sum = 0;
  for (Duration d : samples) sum += static_cast<double>(d);
  LatencyModel m;
  m.kind = LatencyModel::Kind::Exponential;
  m.mean = static_cast<Duration>(std::llround(sum / static_cast<double>(samples.size())));
  return m;
}

LatencyModel fit_uniform(const std::vector<Duration>& samples) {
  if (samples.empty()) throw FitError("fit_uniform needs at least one sample");
  const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  LatencyModel m;
  m.kind = LatencyModel::Kind::Uniform;
  m.lo = *lo;
  m.hi = *hi;
  return m;
}

LatencyFit fit_latency(const std::vector<Duration>& samples, std::size_t min_samples) {
  if (samples.size() < min_samples)
    throw FitError(std::to_string(samples.size()) + " sample(s), at least " + std::to_string(min_samples) +
                   " needed");
  for (Duration d : samples)
    if (d < 0) throw FitError("a negative duration (" + std::to_string(d) + " us) cannot be a latency");
  LatencyFit f;
  f.n = samples.size();
  f.empirical.kind = LatencyModel::Kind::Empirical;
  f.empirical.samples = samples;
  const Eigen::ArrayXd x = in_seconds(samples);
  const double n = static_cast<double>(samples.size());
  const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());

  if (*lo == *hi) {
    // Every continuous density is degenerate here; the sample is a constant.
    CandidateFit c;
    c.family = "fixed";
    c.model = LatencyModel::fixed(*lo);
    c.parameters = 1;
    f.candidates.push_back(c);
    for (const char* fam : {"exponential", "lognormal", "uniform"})
      f.candidates.push_back(not_applicable(fam, fam == std::string("exponential") ? 1 : 2,
                                            "identical samples: the density degenerates"));
    f.chosen = "fixed";
    f.model = *c.model;
    return f;
  }
  f.candidates.push_back(not_applicable("fixed", 1, "samples differ: a fixed latency has likelihood 0"));

  // Exponential: mean = sample mean; ln L = -n ln(mean) - n.
  const double mean = x.mean();
  f.candidates.push_back(scored("exponential", fit_exponential(samples), 1, -n * std::log(mean) - n));

  // Lognormal: mu, sigma of ln x (sigma by 1/n, the ML estimate);
  // ln L = -sum ln x - n ln sigma - n/2 ln 2pi - n/2.
  if (*lo > 0) {
    const Eigen::ArrayXd logs = x.log();
    const double mu = logs.mean();
    const double sigma = std::sqrt((logs - mu).square().sum() / n);
    LatencyModel m = LatencyModel::fit_lognormal(samples);
    f.candidates.push_back(
        scored("lognormal", m, 2, -logs.sum() - n * std::log(sigma) - 0.5 * n * kLog2Pi - 0.5 * n));
  } else {
    f.candidates.push_back(not_applicable("lognormal", 2, "a sample of 0 lies outside its support"));
  }

  // Uniform: [min, max]; ln L = -n ln(max - min).
  f.candidates.push_back(scored("uniform", fit_uniform(samples), 2, -n * std::log(x.maxCoeff() - x.minCoeff())));

  const CandidateFit* best = nullptr;
  for (const auto& c : f.candidates)
    if (c.aic && (!best || *c.aic < *best->aic)) best = &c;
  f.chosen = best->family;
  f.model = *best->model;
  return f;
}

}  // namespace vramsim
