#include "models/latency.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <vector>

namespace vramsim {
namespace {

std::vector<Duration> draw(const LatencyModel& m, std::uint64_t seed, int n) {
  RandomStream rng(seed);
  std::vector<Duration> out;
  for (int i = 0; i < n; ++i) out.push_back(m.sample(rng));
  return out;
}

LatencyModel uniform(Duration lo, Duration hi) {
  LatencyModel m;
  m.kind = LatencyModel::Kind::Uniform;
  m.lo = lo;
  m.hi = hi;
  return m;
}

LatencyModel lognormal(Duration median, double sigma) {
  LatencyModel m;
  m.kind = LatencyModel::Kind::Lognormal;
  m.median = median;
  m.sigma = sigma;
  return m;
}

LatencyModel exponential(Duration mean) {
  LatencyModel m;
  m.kind = LatencyModel::Kind::Exponential;
  m.mean = mean;
  return m;
}

LatencyModel empirical(std::vector<Duration> samples) {
  LatencyModel m;
  m.kind = LatencyModel::Kind::Empirical;
  m.samples = std::move(samples);
  return m;
}

TEST(Latency, FixedReturnsItsValue) {
  for (Duration d : draw(LatencyModel::fixed(181 * kSecond), 1, 20)) EXPECT_EQ(d, 181 * kSecond);
  RandomStream rng(9);
  EXPECT_EQ(LatencyModel::fixed(1234).sample(rng), 1234) << "not rounded to milliseconds";
}

TEST(Latency, EmpiricalDrawsOnlyListedSamples) {
  const std::vector<Duration> listed = {1 * kSecond, 5 * kSecond, 9 * kSecond};
  std::set<Duration> seen;
  for (Duration d : draw(empirical(listed), 3, 300)) {
    EXPECT_NE(std::find(listed.begin(), listed.end(), d), listed.end()) << d;
    seen.insert(d);
  }
  EXPECT_EQ(seen.size(), listed.size()) << "every sample is reachable";
}

TEST(Latency, EmpiricalWithoutSamplesIsZero) {
  RandomStream rng(1);
  EXPECT_EQ(empirical({}).sample(rng), 0);
}

TEST(Latency, UniformStaysWithinBounds) {
  const auto xs = draw(uniform(10 * kSecond, 20 * kSecond), 5, 2000);
  for (Duration d : xs) {
    EXPECT_GE(d, 10 * kSecond);
    EXPECT_LE(d, 20 * kSecond);
    EXPECT_EQ(d % kMillisecond, 0) << "whole milliseconds";
  }
  EXPECT_LT(*std::min_element(xs.begin(), xs.end()), 11 * kSecond) << "spread over the range";
  EXPECT_GT(*std::max_element(xs.begin(), xs.end()), 19 * kSecond);
}

TEST(Latency, SameSeedSameDraws) {
  for (const auto& m : {uniform(kSecond, 60 * kSecond), lognormal(30 * kSecond, 0.5), exponential(10 * kSecond),
                        empirical({kSecond, 2 * kSecond, 3 * kSecond})}) {
    EXPECT_EQ(draw(m, 42, 100), draw(m, 42, 100)) << m.describe();
    EXPECT_NE(draw(m, 42, 100), draw(m, 43, 100)) << m.describe();
  }
}

TEST(Latency, ExponentialMeanIsRoughlyRight) {
  const auto xs = draw(exponential(10 * kSecond), 11, 20000);
  double sum = 0;
  for (Duration d : xs) {
    EXPECT_GE(d, 0);
    sum += static_cast<double>(d);
  }
  EXPECT_NEAR(sum / static_cast<double>(xs.size()), 10.0 * kSecond, 0.03 * 10 * kSecond);
}

TEST(Latency, FitLognormalRecoversMedianAndSigma) {
  const auto xs = draw(lognormal(30 * kSecond, 0.5), 7, 5000);
  const auto fit = LatencyModel::fit_lognormal(xs);
  EXPECT_EQ(fit.kind, LatencyModel::Kind::Lognormal);
  EXPECT_NEAR(static_cast<double>(fit.median), 30.0 * kSecond, 0.03 * 30 * kSecond);
  EXPECT_NEAR(fit.sigma, 0.5, 0.03);
}

TEST(Latency, FitLognormalOfConstantSamplesHasZeroSigma) {
  const auto fit = LatencyModel::fit_lognormal({181 * kSecond, 181 * kSecond, 181 * kSecond});
  EXPECT_EQ(fit.median, 181 * kSecond);
  EXPECT_NEAR(fit.sigma, 0.0, 1e-12);
}

TEST(Latency, FitLognormalRejectsTooFewOrNonPositiveSamples) {
  EXPECT_THROW(LatencyModel::fit_lognormal({}), std::invalid_argument);
  EXPECT_THROW(LatencyModel::fit_lognormal({kSecond}), std::invalid_argument);
  EXPECT_THROW(LatencyModel::fit_lognormal({kSecond, 0}), std::invalid_argument);
}

TEST(Latency, DescribeNamesTheKind) {
  EXPECT_EQ(LatencyModel::fixed(90 * kSecond).describe(), "fixed(90s)");
  EXPECT_NE(uniform(kSecond, 2 * kSecond).describe().find("uniform"), std::string::npos);
  EXPECT_NE(empirical({1, 2}).describe().find("2 samples"), std::string::npos);
}

}  // namespace
}  // namespace vramsim
