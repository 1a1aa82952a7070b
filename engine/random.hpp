#pragma once
// Named random streams derived from the scenario seed. Each stream's seed is a
// hash of (scenario seed, name), so adding a stream never shifts the draws of
// another. Distributions are implemented here rather than taken from <random>,
// whose distribution algorithms differ between standard libraries: the same
// seed must give the same trace everywhere.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>

namespace vramsim {

// The splitmix64 finaliser: a cheap, stateless, well-spread 64-bit mix, used
// to derive stream seeds and deterministic test data.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

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
  // Looked up by the name as given: a literal or a view costs no string.
  RandomStream& stream(std::string_view name);
  std::uint64_t seed() const { return seed_; }
  static std::uint64_t derive_seed(std::uint64_t seed, std::string_view name);

 private:
  std::uint64_t seed_;
  std::map<std::string, std::unique_ptr<RandomStream>, std::less<>> streams_;
};

}  // namespace vramsim
