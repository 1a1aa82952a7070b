#pragma once
// Named random streams derived from the scenario seed. Each stream's seed is a
// hash of (scenario seed, name), so adding a stream never shifts the draws of
// another. Distributions are implemented here rather than taken from <random>,
// whose distribution algorithms differ between standard libraries: the same
// seed must give the same trace everywhere.
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>

namespace vramsim {

class RandomStream {
 public:
  explicit RandomStream(std::uint64_t seed) : gen_(seed) {}
  std::uint64_t next_u64() { return gen_(); }
  double uniform01();                       // [0, 1), 53 random bits
  double uniform(double lo, double hi);     // [lo, hi)
  double exponential(double mean);
  double normal(double mean, double stddev);
  double lognormal(double mu, double sigma);  // exp(N(mu, sigma))
  std::uint64_t index(std::uint64_t n);       // uniform in [0, n), unbiased

 private:
  std::mt19937_64 gen_;  // its output sequence is fixed by the standard
};

class RandomStreams {
 public:
  explicit RandomStreams(std::uint64_t seed) : seed_(seed) {}
  RandomStream& stream(const std::string& name);
  std::uint64_t seed() const { return seed_; }
  static std::uint64_t derive_seed(std::uint64_t seed, const std::string& name);

 private:
  std::uint64_t seed_;
  std::map<std::string, std::unique_ptr<RandomStream>> streams_;
};

}  // namespace vramsim
