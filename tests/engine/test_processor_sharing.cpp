// Two-level processor sharing (engine/processor_sharing): hand-worked
// finish times, then the mean latency against queueing theory.
#include "engine/processor_sharing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <vector>

#include "engine/event_loop.hpp"
#include "engine/random.hpp"
#include "tests/support/sanitized.hpp"

namespace vramsim {
namespace {

SpeedCurve curve(std::vector<double> v) { return SpeedCurve{"test", std::move(v)}; }
const SpeedCurve kTimeSliced = curve({1});
const SpeedCurve kIndependent{"independent", {}};

struct Finishes {
  std::map<int, SimTime> at;
  SharedDevices::Done of(EventLoop& loop, int id) {
    return [this, &loop, id] { at[id] = loop.now(); };
  }
};

// Two 1 s requests starting together on two replicas of one device with
// g(2) = 1.6 each run at 0.8: both end at 1.25 s.
TEST(SharedDevices, TwoReplicasOfOneDeviceShareItsCurve) {
  EventLoop loop;
  SharedDevices ps(loop);
  const SpeedCurve g = curve({1, 1.6, 2.1});
  const auto dev = ps.add_device();
  const auto a = ps.add_replica(dev, g, kTimeSliced), b = ps.add_replica(dev, g, kTimeSliced);
  Finishes f;
  ps.start(a, 1e6, f.of(loop, 1));
  ps.start(b, 1e6, f.of(loop, 2));
  EXPECT_DOUBLE_EQ(ps.request_speed(a), 0.8);
  loop.run();
  EXPECT_EQ(f.at[1], 1'250'000);
  EXPECT_EQ(f.at[2], 1'250'000);
}

// Two 1 s requests at 0 and a third at 0.5 s, the i-th on replica `on(i)`.
std::map<int, SimTime> three_requests(EventLoop& loop, SharedDevices& ps,
                                      const std::function<SharedDevices::ReplicaId(int)>& on) {
  Finishes f;
  ps.start(on(0), 1e6, f.of(loop, 1));
  ps.start(on(1), 1e6, f.of(loop, 2));
  loop.at(500'000, [&] { ps.start(on(2), 1e6, f.of(loop, 3)); });
  loop.run();
  return f.at;
}

// The third on a third replica: until 0.5 s each of the two did 0.4 s of
// work; at g(3)/3 = 0.7 their 0.6 s left take 6/7 s, so they end at
// 1.357142857 s (rounded up to the microsecond); the third has done 0.6 s
// by then and runs alone at full speed for its last 0.4 s.
const std::map<int, SimTime> kThreeFinishes = {{1, 1'357'143}, {2, 1'357'143}, {3, 1'757'143}};

TEST(SharedDevices, AThirdReplicaMovesBothFinishes) {
  EventLoop loop;
  SharedDevices ps(loop);
  const SpeedCurve g = curve({1, 1.6, 2.1});
  const auto dev = ps.add_device();
  std::vector<SharedDevices::ReplicaId> r;
  for (int i = 0; i < 3; ++i) r.push_back(ps.add_replica(dev, g, kTimeSliced));
  EXPECT_EQ(three_requests(loop, ps, [&](int i) { return r[static_cast<std::size_t>(i)]; }), kThreeFinishes);
}

// The same three requests on ONE replica, the curve given as h.
TEST(SharedDevices, TheSameThreeOnOneReplicaWithH) {
  EventLoop loop;
  SharedDevices ps(loop);
  const SpeedCurve h = curve({1, 1.6, 2.1});
  const auto r = ps.add_replica(ps.add_device(), kTimeSliced, h);
  EXPECT_EQ(three_requests(loop, ps, [&](int) { return r; }), kThreeFinishes);
}

// Replica and request speeds multiply: two replicas on a time-sliced device,
// one of them with two requests under time-sliced h: each of those runs at
// 1/2 x 1/2.
TEST(SharedDevices, SpeedsMultiplyAcrossTheTwoLevels) {
  EventLoop loop;
  SharedDevices ps(loop);
  const auto dev = ps.add_device();
  const auto a = ps.add_replica(dev, kTimeSliced, kTimeSliced), b = ps.add_replica(dev, kTimeSliced, kTimeSliced);
  Finishes f;
  ps.start(a, 1e6, f.of(loop, 1));
  ps.start(a, 1e6, f.of(loop, 2));
  ps.start(b, 1e6, f.of(loop, 3));
  EXPECT_DOUBLE_EQ(ps.request_speed(a), 0.25);
  EXPECT_DOUBLE_EQ(ps.request_speed(b), 0.5);
  loop.run();
  // b: 1 s of work at 0.5 ends at 2 s; a's two have done 0.5 s each by
  // then and finish their 0.5 s left at 1/2 each: at 3 s.
  EXPECT_EQ(f.at[3], 2'000'000);
  EXPECT_EQ(f.at[1], 3'000'000);
  EXPECT_EQ(f.at[2], 3'000'000);
}

// Independent servers: every request ends at its start plus its work.
TEST(SharedDevices, IndependentIsStartPlusWork) {
  EventLoop loop;
  SharedDevices ps(loop);
  const auto dev = ps.add_device();
  const auto a = ps.add_replica(dev, kIndependent, kIndependent), b = ps.add_replica(dev, kIndependent, kIndependent);
  Finishes f;
  ps.start(a, 3'333, f.of(loop, 1));
  ps.start(a, 7'001, f.of(loop, 2));
  loop.at(1'000, [&] { ps.start(b, 2'500, f.of(loop, 3)); });
  loop.run();
  EXPECT_EQ(f.at[1], 3'333);
  EXPECT_EQ(f.at[2], 7'001);
  EXPECT_EQ(f.at[3], 3'500);
}

// A cancelled request gives its share back: two 1 s requests time-sliced on
// one replica, one cancelled at 0.5 s (0.25 s done each): the other runs
// its 0.75 s left alone and ends at 1.25 s; the cancelled one never calls.
TEST(SharedDevices, CancelGivesTheShareBack) {
  EventLoop loop;
  SharedDevices ps(loop);
  const auto r = ps.add_replica(ps.add_device(), kTimeSliced, kTimeSliced);
  Finishes f;
  const auto first = ps.start(r, 1e6, f.of(loop, 1));
  ps.start(r, 1e6, f.of(loop, 2));
  loop.at(500'000, [&] { EXPECT_TRUE(ps.cancel(first)); });
  loop.run();
  EXPECT_EQ(f.at.count(1), 0u);
  EXPECT_EQ(f.at[2], 1'250'000);
  EXPECT_FALSE(ps.cancel(first));
  EXPECT_FALSE(ps.cancel(0));
}

// A dropped replica's requests end with no callback and leave the device
// to the others.
TEST(SharedDevices, DropEndsEveryRequestOfTheReplicaSilently) {
  EventLoop loop;
  SharedDevices ps(loop);
  const auto dev = ps.add_device();
  const auto a = ps.add_replica(dev, kTimeSliced, kTimeSliced), b = ps.add_replica(dev, kTimeSliced, kTimeSliced);
  Finishes f;
  ps.start(a, 1e6, f.of(loop, 1));
  ps.start(a, 1e6, f.of(loop, 2));
  ps.start(b, 1e6, f.of(loop, 3));
  loop.at(400'000, [&] { ps.drop(a); });
  loop.run();
  EXPECT_EQ(f.at.size(), 1u);
  // b did 0.2 s by 0.4 s, then 0.8 s alone.
  EXPECT_EQ(f.at[3], 1'200'000);
  EXPECT_EQ(ps.in_service(a), 0);
  EXPECT_EQ(ps.busy_replicas(dev), 0);
}

// A request that starts from its own completion callback (the router's
// dispatch) finds the device in a consistent state.
TEST(SharedDevices, ACompletionMayStartTheNextRequest) {
  EventLoop loop;
  SharedDevices ps(loop);
  const auto r = ps.add_replica(ps.add_device(), kTimeSliced, kTimeSliced);
  std::vector<SimTime> ends;
  std::function<void()> next = [&] {
    ends.push_back(loop.now());
    if (ends.size() < 3) ps.start(r, 1'000, next);
  };
  ps.start(r, 1'000, next);
  loop.run();
  EXPECT_EQ(ends, (std::vector<SimTime>{1'000, 2'000, 3'000}));
}

// ---------------------------------------------------------------- theory

// Mean latency of K servers in processor sharing with FIFO admission:
// Poisson arrivals at `lambda`, exponential work of mean 1/mu; n requests
// in the system leave at mu x g(min(n, K)). The birth-death chain's
// stationary mean, by Little's law.
double birth_death_mean_latency(double lambda, double mu, const SpeedCurve& g, int k) {
  double p = 1, sum = 0, weighted = 0;
  for (int n = 0; n < 200000; ++n) {
    sum += p;
    weighted += n * p;
    const double death = mu * g.at(static_cast<std::size_t>(std::min(n + 1, k)));
    p *= lambda / death;
    if (p < 1e-300) break;
  }
  return weighted / sum / lambda;
}

enum class Level { AcrossReplicas, WithinAReplica };

// K servers fed from one FIFO queue: K replicas of one request each on one
// device (g), or one replica taking K requests at once (h). Returns the mean
// latency over `measured` requests after `warmup`.
double simulate_mean_latency(Level level, const SpeedCurve& curve, int k, double lambda_per_us,
                             const std::function<double(RandomStream&)>& work, int warmup, int measured,
                             std::uint64_t seed) {
  EventLoop loop;
  SharedDevices ps(loop);
  const auto dev = ps.add_device();
  std::vector<SharedDevices::ReplicaId> replicas;
  std::vector<int> held;
  if (level == Level::AcrossReplicas)
    for (int i = 0; i < k; ++i) replicas.push_back(ps.add_replica(dev, curve, kTimeSliced));
  else
    replicas.push_back(ps.add_replica(dev, kTimeSliced, curve));
  held.assign(replicas.size(), 0);
  const int cap = level == Level::AcrossReplicas ? 1 : k;
  RandomStream arrivals(seed), works(seed + 1);
  std::deque<std::pair<SimTime, double>> queue;
  double total = 0;
  int started = 0, done = 0;
  std::function<void(std::size_t, SimTime, double, int)> run;
  auto place = [&] {
    for (std::size_t i = 0; i < replicas.size() && !queue.empty(); ++i)
      while (held[i] < cap && !queue.empty()) {
        auto [arrived, w] = queue.front();
        queue.pop_front();
        run(i, arrived, w, started++);
      }
  };
  run = [&](std::size_t i, SimTime arrived, double w, int index) {
    ++held[i];
    ps.start(replicas[i], w, [&, i, arrived, index] {
      --held[i];
      if (index >= warmup) {
        total += static_cast<double>(loop.now() - arrived);
        ++done;
      }
      if (done >= measured) loop.stop();
      place();
    });
  };
  std::function<void()> arrive = [&] {
    queue.emplace_back(loop.now(), work(works));
    place();
    const auto gap = static_cast<Duration>(std::llround(arrivals.exponential(1 / lambda_per_us)));
    loop.at(loop.now() + std::max<Duration>(gap, 0), arrive);
  };
  arrive();
  loop.run();
  return total / done;
}

// 10^6 requests within 2 %. Under the sanitizers (a minute a case there)
// 10^5 within 5 %: the same code, checked at full size by the other builds.
using testing_support::kSanitized;
constexpr int kWarmup = 10'000;
constexpr int kMeasured = kSanitized ? 100'000 : 1'000'000;
constexpr double kTolerance = kSanitized ? 0.05 : 0.02;

struct ChainCase {
  const char* name;
  std::vector<double> g;
  int k;
  double rho;  // of the chain's top rate mu x g(K)
};

class BirthDeath : public ::testing::TestWithParam<std::tuple<ChainCase, Level>> {};

// With exponential work of mean 1 ms, the mean latency of 10^6 requests is
// within 2% of the chain's.
TEST_P(BirthDeath, MeanLatencyWithinTwoPercentOfTheChain) {
  const auto& [c, level] = GetParam();
  const SpeedCurve g = curve(c.g);
  const double mean_us = 1000, mu = 1 / mean_us;
  const double lambda = c.rho * mu * g.at(static_cast<std::size_t>(c.k));
  const double theory = birth_death_mean_latency(lambda, mu, g, c.k);
  const double sim = simulate_mean_latency(
      level, g, c.k, lambda, [&](RandomStream& r) { return r.exponential(mean_us); }, kWarmup, kMeasured, 7);
  EXPECT_NEAR(sim / theory, 1, kTolerance) << "simulated " << sim << " us, chain " << theory << " us";
}

INSTANTIATE_TEST_SUITE_P(
    Curves, BirthDeath,
    ::testing::Combine(::testing::Values(ChainCase{"TimeSliced", {1}, 4, 0.7},
                                         ChainCase{"Rising", {1, 1.809, 2.163, 2.593}, 4, 0.7},
                                         ChainCase{"Falling", {1, 0.956, 0.955}, 3, 0.7}),
                       ::testing::Values(Level::AcrossReplicas, Level::WithinAReplica)),
    [](const auto& info) {
      return std::string(std::get<0>(info.param).name) +
             (std::get<1>(info.param) == Level::AcrossReplicas ? "AcrossReplicas" : "WithinAReplica");
    });

// M/G/1-PS: one time-sliced server taking every request at once; the mean
// latency is E[S] / (1 - rho) whatever the distribution of S.
TEST(SharedDevices, MG1ProcessorSharingIsInsensitiveToTheDistribution) {
  const double mean_us = 1000, rho = 0.7, lambda = rho / mean_us;
  const double theory = mean_us / (1 - rho);
  const double sigma = 1;
  const double median = mean_us * std::exp(-sigma * sigma / 2);  // a lognormal of mean 1 ms
  struct Dist {
    const char* name;
    std::function<double(RandomStream&)> draw;
  };
  for (const Dist& d : {Dist{"fixed", [&](RandomStream&) { return mean_us; }},
                        Dist{"lognormal", [&](RandomStream& r) { return r.lognormal(std::log(median), sigma); }}}) {
    const double sim = simulate_mean_latency(Level::WithinAReplica, kTimeSliced, 1 << 30, lambda, d.draw, kWarmup,
                                             kMeasured, 11);
    EXPECT_NEAR(sim / theory, 1, kTolerance) << d.name << ": simulated " << sim << " us, E[S]/(1-rho) " << theory;
  }
}

}  // namespace
}  // namespace vramsim
