#include "engine/random.hpp"

#include <cmath>

namespace vramsim {
namespace {
std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}
constexpr double kPi = 3.14159265358979323846;
}  // namespace

double RandomStream::uniform01() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
double RandomStream::uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
double RandomStream::exponential(double mean) { return -mean * std::log1p(-uniform01()); }
double RandomStream::normal(double mean, double stddev) {
  // Box-Muller, one value per call: simple and stateless between calls.
  double u1 = 1.0 - uniform01();  // (0, 1]
  double u2 = uniform01();
  return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
}
double RandomStream::lognormal(double mu, double sigma) { return std::exp(normal(mu, sigma)); }
std::uint64_t RandomStream::index(std::uint64_t n) {
  if (n <= 1) return 0;
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t x;
  do x = gen_();
  while (x >= limit);
  return x % n;
}

std::uint64_t RandomStreams::derive_seed(std::uint64_t seed, std::string_view name) {
  return splitmix64(splitmix64(seed) ^ fnv1a(name));
}

RandomStream& RandomStreams::stream(std::string_view name) {
  auto it = streams_.find(name);
  if (it == streams_.end())
    it = streams_.emplace(std::string(name), std::make_unique<RandomStream>(derive_seed(seed_, name))).first;
  return *it->second;
}

}  // namespace vramsim
