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

// The standard normal's density, and its upper tail 1 - Phi.
double phi(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI); }
double upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

}  // namespace

LatencyModel fit_exponential_censored(const std::vector<Duration>& samples, const std::vector<Duration>& censored) {
  if (samples.empty()) throw FitError("fit_exponential_censored needs at least one completed sample");
  // ML: the total time observed over the number of completions.
  double sum = 0;
  for (Duration d : samples) sum += static_cast<double>(d);
  for (Duration d : censored) sum += static_cast<double>(d);
  LatencyModel m;
  m.kind = LatencyModel::Kind::Exponential;
  m.mean = static_cast<Duration>(std::llround(sum / static_cast<double>(samples.size())));
  return m;
}

LognormalFit fit_lognormal_censored(const std::vector<Duration>& samples, const std::vector<Duration>& censored) {
  std::vector<double> y, c;
  for (Duration d : samples) {
    if (d <= 0) throw FitError("a sample of 0 lies outside the lognormal's support");
    y.push_back(std::log(to_seconds(d)));
  }
  for (Duration d : censored)
    if (d > 0) c.push_back(std::log(to_seconds(d)));
  if (y.size() < 2 || *std::max_element(y.begin(), y.end()) == *std::min_element(y.begin(), y.end()))
    throw FitError("the lognormal needs at least two different completed samples");
  const double n = static_cast<double>(y.size() + c.size());
  double mu = 0, var = 0;
  for (double v : y) mu += v;
  mu /= static_cast<double>(y.size());
  for (double v : y) var += (v - mu) * (v - mu);
  var /= static_cast<double>(y.size());
  // EM for a normal with right-censored points: each censored ln value is
  // replaced by its conditional moments above the censoring point.
  double y1 = 0, y2 = 0;  // the completed samples' part of each step: the same every step
  for (double v : y) {
    y1 += v;
    y2 += v * v;
  }
  for (int iter = 0; iter < 10000; ++iter) {
    const double sigma = std::sqrt(var);
    double s1 = y1, s2 = y2;
    for (double v : c) {
      const double a = (v - mu) / sigma;
      const double tail = upper_tail(a);
      // Far in the tail the ratio phi/tail tends to a: keep it finite.
      const double lambda = tail > 1e-300 ? phi(a) / tail : a;
      s1 += mu + sigma * lambda;
      s2 += mu * mu + var + sigma * (v + mu) * lambda;
    }
    const double mu_next = s1 / n;
    const double var_next = std::max(s2 / n - mu_next * mu_next, 1e-24);
    const bool done = std::fabs(mu_next - mu) < 1e-12 && std::fabs(var_next - var) < 1e-12 * std::max(1.0, var);
    mu = mu_next;
    var = var_next;
    if (done) break;
  }
  LognormalFit f;
  f.mu = mu;
  f.sigma = std::sqrt(var);
  // ln L in seconds: the completed samples' densities of x, the censored
  // ones' survival probabilities.
  for (double v : y) {
    const double z = (v - mu) / f.sigma;
    f.log_likelihood += -v - std::log(f.sigma) - 0.5 * kLog2Pi - 0.5 * z * z;
  }
  for (double v : c) f.log_likelihood += std::log(std::max(upper_tail((v - mu) / f.sigma), 1e-300));
  return f;
}

LatencyModel fit_exponential(const std::vector<Duration>& samples) {
  if (samples.empty()) throw FitError("fit_exponential needs at least one sample");
  return fit_exponential_censored(samples, {});
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

namespace {

// The candidate with the lowest AIC is the fit.
LatencyFit chosen_by_aic(LatencyFit f) {
  const CandidateFit* best = nullptr;
  for (const auto& c : f.candidates)
    if (c.aic && (!best || *c.aic < *best->aic)) best = &c;
  f.chosen = best->family;
  f.model = *best->model;
  return f;
}

// Identical samples: a fixed latency; every continuous density degenerates.
LatencyFit fixed_fit(LatencyFit f, Duration value) {
  CandidateFit c;
  c.family = "fixed";
  c.model = LatencyModel::fixed(value);
  c.parameters = 1;
  f.candidates = {c};
  for (const char* fam : {"exponential", "lognormal", "uniform"})
    f.candidates.push_back(not_applicable(fam, fam == std::string("exponential") ? 1 : 2,
                                          "identical samples: the density degenerates"));
  f.chosen = "fixed";
  f.model = *c.model;
  return f;
}

// The fit with right-censored samples: exponential and lognormal by
// censored maximum likelihood; fixed and uniform do not apply.
LatencyFit fit_with_censored(const std::vector<Duration>& samples, const std::vector<Duration>& censored,
                             LatencyFit f) {
  f.candidates.push_back(not_applicable("fixed", 1, "censored samples: a fixed latency is not fitted to them"));
  const LatencyModel e = fit_exponential_censored(samples, censored);
  const double mean_s = to_seconds(e.mean);
  double total_s = 0;
  for (Duration d : samples) total_s += to_seconds(d);
  for (Duration d : censored) total_s += to_seconds(d);
  const double events = static_cast<double>(samples.size());
  f.candidates.push_back(scored("exponential", e, 1, -events * std::log(mean_s) - total_s / mean_s));
  try {
    const LognormalFit l = fit_lognormal_censored(samples, censored);
    LatencyModel m;
    m.kind = LatencyModel::Kind::Lognormal;
    m.median = static_cast<Duration>(std::llround(std::exp(l.mu) * static_cast<double>(kSecond)));
    m.sigma = l.sigma;
    f.candidates.push_back(scored("lognormal", m, 2, l.log_likelihood));
  } catch (const FitError& err) {
    f.candidates.push_back(not_applicable("lognormal", 2, err.what()));
  }
  f.candidates.push_back(not_applicable("uniform", 2, "censored samples: the uniform fit takes none"));
  return chosen_by_aic(std::move(f));
}

}  // namespace

LatencyFit fit_latency(const std::vector<Duration>& samples, std::size_t min_samples,
                       const std::vector<Duration>& censored) {
  for (Duration d : censored)
    if (d < 0) throw FitError("a negative censored duration (" + std::to_string(d) + " us) cannot be a latency");
  if (samples.size() < min_samples)
    throw FitError(std::to_string(samples.size()) + " sample(s), at least " + std::to_string(min_samples) +
                   " needed");
  for (Duration d : samples)
    if (d < 0) throw FitError("a negative duration (" + std::to_string(d) + " us) cannot be a latency");
  LatencyFit f;
  f.n = samples.size();
  f.empirical.kind = LatencyModel::Kind::Empirical;
  f.empirical.samples = samples;
  f.censored = censored.size();
  if (!censored.empty()) {
    const auto [clo, chi] = std::minmax_element(samples.begin(), samples.end());
    if (*clo == *chi) {
      // Identical completions: fixed, unless a censored one outlasted them.
      if (*std::max_element(censored.begin(), censored.end()) <= *clo) return fixed_fit(std::move(f), *clo);
    }
    return fit_with_censored(samples, censored, f);
  }
  const Eigen::ArrayXd x = in_seconds(samples);
  const double n = static_cast<double>(samples.size());
  const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());

  if (*lo == *hi) return fixed_fit(std::move(f), *lo);
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

  return chosen_by_aic(std::move(f));
}

}  // namespace vramsim
