// Maximum-likelihood fits and the AIC choice recover the parameters and the
// family of samples drawn from each latency model with the project's own
// random streams (N = 2000, fixed seeds). Tolerances: lognormal median and
// sigma within 5 %, exponential mean within 5 %, uniform bounds within 1 %
// of the range.
#include "models/latency_fit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace vramsim {
namespace {

constexpr int kN = 2000;

std::vector<Duration> draw(const LatencyModel& m, std::uint64_t seed, int n = kN) {
  RandomStream rng(seed);
  std::vector<Duration> out;
  for (int i = 0; i < n; ++i) out.push_back(m.sample(rng));
  return out;
}

double rel(double got, double want) { return std::abs(got - want) / want; }

const CandidateFit& candidate(const LatencyFit& f, const std::string& family) {
  for (const auto& c : f.candidates)
    if (c.family == family) return c;
  throw std::runtime_error("no candidate " + family);
}

TEST(LatencyFit, RecoversALognormalAndPicksIt) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    LatencyModel m;
    m.kind = LatencyModel::Kind::Lognormal;
    m.median = seconds(30);
    m.sigma = 0.4;
    const LatencyFit f = fit_latency(draw(m, seed));
    EXPECT_EQ(f.chosen, "lognormal") << "seed " << seed;
    ASSERT_EQ(f.model.kind, LatencyModel::Kind::Lognormal);
    EXPECT_LT(rel(static_cast<double>(f.model.median), static_cast<double>(m.median)), 0.05);
    EXPECT_LT(rel(f.model.sigma, m.sigma), 0.05);
    EXPECT_LT(*candidate(f, "lognormal").aic, *candidate(f, "exponential").aic);
    EXPECT_LT(*candidate(f, "lognormal").aic, *candidate(f, "uniform").aic);
  }
}

TEST(LatencyFit, RecoversAnExponentialAndPicksIt) {
  for (std::uint64_t seed : {4u, 5u, 6u}) {
    LatencyModel m;
    m.kind = LatencyModel::Kind::Exponential;
    m.mean = seconds(10);
    const LatencyFit f = fit_latency(draw(m, seed));
    EXPECT_EQ(f.chosen, "exponential") << "seed " << seed;
    ASSERT_EQ(f.model.kind, LatencyModel::Kind::Exponential);
    EXPECT_LT(rel(static_cast<double>(f.model.mean), static_cast<double>(m.mean)), 0.05);
  }
}

// Right-censored waits: each true wait is cut off by an independent
// cancellation time (uniform over [0, 3 x the median]); a cancelled one is
// known only to have lasted at least that long. Censored maximum likelihood
// recovers the parameters; dropping the censored waits, as a fit of the
// completed ones alone does, is biased low.
void censor(const std::vector<Duration>& truth, std::uint64_t seed, Duration horizon, std::vector<Duration>& done,
            std::vector<Duration>& cut) {
  RandomStream rng(seed);
  LatencyModel cancel;
  cancel.kind = LatencyModel::Kind::Uniform;
  cancel.lo = 0;
  cancel.hi = horizon;
  for (Duration t : truth) {
    const Duration c = cancel.sample(rng);
    (t <= c ? done : cut).push_back(t <= c ? t : c);
  }
}

TEST(LatencyFit, CensoredExponentialRecoversTheMean) {
  LatencyModel m;
  m.kind = LatencyModel::Kind::Exponential;
  m.mean = seconds(10);
  std::vector<Duration> done, cut;
  censor(draw(m, 21, 5000), 22, seconds(30), done, cut);
  ASSERT_GT(cut.size(), 1000u) << "a third or so is censored";
  const LatencyFit f = fit_latency(done, kMinFitSamples, cut);
  EXPECT_EQ(f.censored, cut.size());
  const LatencyModel e = *candidate(f, "exponential").model;
  EXPECT_LT(rel(static_cast<double>(e.mean), static_cast<double>(m.mean)), 0.05) << e.mean;
  const LatencyModel dropped = fit_exponential(done);
  EXPECT_LT(static_cast<double>(dropped.mean), 0.8 * static_cast<double>(m.mean)) << "biased low without them";
  EXPECT_FALSE(candidate(f, "uniform").aic) << candidate(f, "uniform").why_not;
}

TEST(LatencyFit, CensoredLognormalRecoversMedianAndSigmaAndIsChosen) {
  for (std::uint64_t seed : {31u, 32u}) {
    LatencyModel m;
    m.kind = LatencyModel::Kind::Lognormal;
    m.median = seconds(30);
    m.sigma = 0.5;
    std::vector<Duration> done, cut;
    censor(draw(m, seed, 5000), seed + 100, seconds(90), done, cut);
    ASSERT_GT(cut.size(), 500u);
    const LatencyFit f = fit_latency(done, kMinFitSamples, cut);
    EXPECT_EQ(f.chosen, "lognormal") << "seed " << seed;
    ASSERT_EQ(f.model.kind, LatencyModel::Kind::Lognormal);
    EXPECT_LT(rel(static_cast<double>(f.model.median), static_cast<double>(m.median)), 0.05) << f.model.median;
    EXPECT_LT(rel(f.model.sigma, m.sigma), 0.05) << f.model.sigma;
    const LatencyFit dropped = fit_latency(done);
    EXPECT_LT(static_cast<double>(dropped.model.median), 0.9 * static_cast<double>(m.median))
        << "the completed waits alone are the short ones";
  }
}

TEST(LatencyFit, CensoredMaximumLikelihoodBeatsItsNeighbours) {
  // At the fitted parameters the censored log-likelihood is a maximum: any
  // small step in mu or sigma lowers it.
  LatencyModel m;
  m.kind = LatencyModel::Kind::Lognormal;
  m.median = seconds(5);
  m.sigma = 0.8;
  std::vector<Duration> done, cut;
  censor(draw(m, 41, 400), 42, seconds(15), done, cut);
  const LognormalFit best = fit_lognormal_censored(done, cut);
  auto log_l = [&](double mu, double sigma) {
    double l = 0;
    for (Duration d : done) {
      const double y = std::log(to_seconds(d)), z = (y - mu) / sigma;
      l += -y - std::log(sigma) - 0.5 * std::log(2 * M_PI) - 0.5 * z * z;
    }
    for (Duration d : cut)
      if (d > 0) l += std::log(0.5 * std::erfc((std::log(to_seconds(d)) - mu) / sigma / std::sqrt(2.0)));
    return l;
  };
  EXPECT_NEAR(best.log_likelihood, log_l(best.mu, best.sigma), 1e-6);
  for (double dm : {-0.01, 0.01}) EXPECT_LT(log_l(best.mu + dm, best.sigma), best.log_likelihood);
  for (double ds : {-0.01, 0.01}) EXPECT_LT(log_l(best.mu, best.sigma + ds), best.log_likelihood);
}

TEST(LatencyFit, CensoredNegativeIsRefused) {
  EXPECT_THROW(fit_latency(std::vector<Duration>(5, seconds(1)), kMinFitSamples, {-1}), FitError);
}

TEST(LatencyFit, RecoversUniformBoundsAndPicksUniform) {
  for (std::uint64_t seed : {7u, 8u, 9u}) {
    LatencyModel m;
    m.kind = LatencyModel::Kind::Uniform;
    m.lo = seconds(20);
    m.hi = seconds(40);
    const LatencyFit f = fit_latency(draw(m, seed));
    EXPECT_EQ(f.chosen, "uniform") << "seed " << seed;
    ASSERT_EQ(f.model.kind, LatencyModel::Kind::Uniform);
    const double range = static_cast<double>(m.hi - m.lo);
    // The ML bounds are the sample's extremes: inside the true ones.
    EXPECT_GE(f.model.lo, m.lo);
    EXPECT_LE(f.model.hi, m.hi);
    EXPECT_LT(static_cast<double>(f.model.lo - m.lo), 0.01 * range);
    EXPECT_LT(static_cast<double>(m.hi - f.model.hi), 0.01 * range);
  }
}

TEST(LatencyFit, IdenticalSamplesAreAFixedLatency) {
  const LatencyFit f = fit_latency(std::vector<Duration>(12, seconds(6)));
  EXPECT_EQ(f.chosen, "fixed");
  EXPECT_EQ(f.model.kind, LatencyModel::Kind::Fixed);
  EXPECT_EQ(f.model.value, seconds(6));
  EXPECT_FALSE(candidate(f, "lognormal").aic.has_value());
  EXPECT_FALSE(candidate(f, "lognormal").why_not.empty());
}

TEST(LatencyFit, KeepsTheSamplesAsTheEmpiricalModel) {
  const std::vector<Duration> s = {seconds(1), seconds(3), seconds(2), seconds(8), seconds(5)};
  const LatencyFit f = fit_latency(s);
  EXPECT_EQ(f.n, 5u);
  EXPECT_EQ(f.empirical.kind, LatencyModel::Kind::Empirical);
  EXPECT_EQ(f.empirical.samples, s);
  // The closed forms, by hand: mean 3.8 s; bounds 1 s and 8 s.
  EXPECT_EQ(candidate(f, "exponential").model->mean, seconds(3.8));
  EXPECT_EQ(candidate(f, "uniform").model->lo, seconds(1));
  EXPECT_EQ(candidate(f, "uniform").model->hi, seconds(8));
  // AIC = 2k - 2 ln L with ln L = -n ln(mean) - n for the exponential.
  EXPECT_NEAR(*candidate(f, "exponential").aic, 2.0 + 2.0 * (5 * std::log(3.8) + 5), 1e-9);
  EXPECT_NEAR(*candidate(f, "uniform").aic, 4.0 + 2.0 * 5 * std::log(7.0), 1e-9);
}

TEST(LatencyFit, AZeroSampleRulesOutTheLognormalOnly) {
  const LatencyFit f = fit_latency({0, seconds(1), seconds(2), seconds(4), seconds(9)});
  EXPECT_FALSE(candidate(f, "lognormal").aic.has_value());
  EXPECT_TRUE(candidate(f, "exponential").aic.has_value());
  EXPECT_TRUE(candidate(f, "uniform").aic.has_value());
  EXPECT_NE(f.chosen, "lognormal");
}

TEST(LatencyFit, RefusesTooFewSamples) {
  const std::vector<Duration> four = {seconds(1), seconds(2), seconds(3), seconds(4)};
  try {
    fit_latency(four);
    FAIL() << "four samples were fitted";
  } catch (const FitError& e) {
    EXPECT_NE(std::string(e.what()).find("4 sample(s), at least 5 needed"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(fit_latency(four, 4));
  EXPECT_THROW(fit_latency({}, 2), FitError);
}

TEST(LatencyFit, RefusesANegativeDuration) {
  EXPECT_THROW(fit_latency({seconds(1), seconds(2), -1, seconds(3), seconds(4)}), FitError);
}

}  // namespace
}  // namespace vramsim
