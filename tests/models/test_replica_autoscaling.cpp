// Ray Serve's replica autoscaling policy, checked on the inputs and outputs
// of Ray's own unit tests (python/ray/serve/tests/unit/
// test_autoscaling_policy.py; docs/serving.md lists the version read). Each
// test names the Ray test it reproduces.
#include "models/replica_autoscaling.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <tuple>

#include "models/registry.hpp"

namespace vramsim {
namespace {

std::shared_ptr<const ReplicaAutoscalingPolicy> ray() {
  return PolicyRegistry::instance().make<ReplicaAutoscalingPolicy>("ray");
}

ReplicaAutoscalingConfig config(int min, int max, double target,
                                RayServeVersion version = RayServeVersion::k2026_04_29) {
  ReplicaAutoscalingConfig c;
  c.min_replicas = min;
  c.max_replicas = max;
  c.target_ongoing_requests = target;
  c.version = version;
  return c;
}

// One policy call as Ray's tests make it: (target, total, running).
int decide(const ReplicaAutoscalingConfig& c, ReplicaAutoscalingState& st, int target, double total, int running) {
  return ray()->decide(c, ReplicaLoad{target, running, total}, st);
}

// One call bounded as the controller bounds it (apply_bounds).
int bounded(const ReplicaAutoscalingConfig& c, ReplicaAutoscalingState& st, int target, double total, int running) {
  return std::clamp(decide(c, st, target, total, running), c.min_replicas, c.max_replicas);
}

// `n` calls with the same inputs; every one must return `target`.
void unchanged_for(const ReplicaAutoscalingConfig& c, ReplicaAutoscalingState& st, int n, int target, double total,
                   int running) {
  for (int i = 0; i < n; ++i) ASSERT_EQ(decide(c, st, target, total, running), target) << "call " << i + 1;
}

// Where the two versions agree, one body over both.
class RayVersions : public ::testing::TestWithParam<RayServeVersion> {
 protected:
  ReplicaAutoscalingConfig config(int min, int max, double target) const {
    return vramsim::config(min, max, target, GetParam());
  }
};
INSTANTIATE_TEST_SUITE_P(Both, RayVersions,
                         ::testing::Values(RayServeVersion::k2025_10_06, RayServeVersion::k2026_04_29),
                         [](const auto& info) { return info.param == RayServeVersion::k2025_10_06 ? "v2025_10_06" : "v2026_04_29"; });

TEST(RayReplicaAutoscaling, BoundsChecking) {  // test_bounds_checking
  // 2025-10-06 bounds the desired count itself; 2026-04-29 leaves the
  // bounds to the controller (apply_bounds, autoscaling_state.py:370-373@5866967).
  const auto old = config(9, 11, 100, RayServeVersion::k2025_10_06);
  EXPECT_EQ(ray_desired_replicas(old, 1500, 10), 11);
  EXPECT_EQ(ray_desired_replicas(old, 500, 10), 9);
  const auto now = config(9, 11, 100);
  EXPECT_EQ(ray_desired_replicas(now, 1500, 10), 15);
  EXPECT_EQ(ray_desired_replicas(now, 500, 10), 5);
  for (double total = 500; total <= 1490; total += 10) {
    const int d = ray_desired_replicas(old, total, 10);
    EXPECT_GE(d, 9);
    EXPECT_LE(d, 11);
    ReplicaAutoscalingConfig c = now;
    c.upscale_delay_s = c.downscale_delay_s = 0;
    ReplicaAutoscalingState st;
    const int bounded = std::clamp(ray()->decide(c, ReplicaLoad{10, 10, total}, st), 9, 11);
    EXPECT_EQ(bounded, std::clamp(d, 9, 11)) << total;
  }
}

TEST_P(RayVersions, ScaleUpAndDownByTheErrorRatio) {  // test_scale_up, test_scale_down
  for (double t : {0.5, 1.0, 1.5}) {
    const auto c = config(0, 100, t);
    EXPECT_EQ(ray_desired_replicas(c, 2 * t * 10, 10), 20) << t;
    EXPECT_EQ(ray_desired_replicas(c, 0.5 * t * 10, 10), 5) << t;
  }
}

TEST_P(RayVersions, SmoothingFactorAppliesBothWays) {  // test_scaling_factor
  auto c = config(0, 100, 2);
  c.smoothing_factor = 0.5;
  EXPECT_EQ(ray_desired_replicas(c, 80, 10), 25);   // ceil(10 + 0.5 (40 - 10))
  EXPECT_EQ(ray_desired_replicas(c, 2.5, 10), 6);   // ceil(5.625)
  auto d = config(0, 100, 2);
  d.upscaling_factor = 0.5;
  d.downscaling_factor = 0.5;
  EXPECT_EQ(ray_desired_replicas(d, 80, 10), 25);
  EXPECT_EQ(ray_desired_replicas(d, 2.5, 10), 6);
}

TEST_P(RayVersions, UpscalingAndDownscalingFactorsApart) {  // test_upscaling_factor, test_downscaling_factor
  auto up = config(0, 100, 2);
  up.upscaling_factor = 0.5;
  EXPECT_EQ(ray_desired_replicas(up, 80, 10), 25);
  EXPECT_EQ(ray_desired_replicas(up, 2.5, 10), 2);  // down factor 1: ceil(1.25)
  auto down = config(0, 100, 2);
  down.downscaling_factor = 0.5;
  EXPECT_EQ(ray_desired_replicas(down, 80, 10), 40);
  EXPECT_EQ(ray_desired_replicas(down, 2.5, 10), 6);
}

TEST_P(RayVersions, AFractionalDownscaleStillRemovesOne) {  // test_downscaling_with_fractional_scaling_factor
  struct Case { int running; double total, factor; int want; };
  for (const Case k : {Case{2, 0.6, 0.5, 1}, Case{5, 2.0, 0.2, 4}, Case{10, 4.0, 0.1, 9}}) {
    auto c = config(0, 100, 1);
    c.downscaling_factor = k.factor;
    EXPECT_EQ(ray_desired_replicas(c, k.total, k.running), k.want) << k.running;
  }
  // A desired count whose ceil is the current one is no downscale at all.
  auto c = config(1, 30, 1);
  c.downscaling_factor = 0.5;
  EXPECT_EQ(ray_desired_replicas(c, 9.5, 10), 10);
}

TEST_P(RayVersions, ColdStartScalesAtOnceByTheUpscalingFactor) {  // test_scaling_factor_scale_up_from_0_replicas
  auto c = config(0, 2, 1);
  c.upscaling_factor = 10;
  ReplicaAutoscalingState st;
  EXPECT_EQ(decide(c, st, 0, 1, 0), 10) << "the policy does not bound a cold start; the caller does";
  c.upscaling_factor = 0.5;
  EXPECT_EQ(decide(c, st, 0, 1, 0), 1);
  EXPECT_EQ(st.decision_counter, 0);
  // With no request a cold deployment keeps its target
  // (TestWarmupScalingFeedbackLoop: 100 loops at target 2).
  auto w = config(2, 10, 0.2);
  w.upscale_delay_s = 5;
  w.downscale_delay_s = 30;
  ReplicaAutoscalingState ws;
  unchanged_for(w, ws, 100, 2, 0, 0);
}

TEST_P(RayVersions, ScaleDownToZeroGoesThroughOne) {  // test_scaling_factor_scale_down_to_0_replicas
  auto c = config(0, 5, 1);
  c.downscaling_factor = 10;
  c.upscale_delay_s = 0;
  c.downscale_delay_s = 0;
  ReplicaAutoscalingState st;
  EXPECT_EQ(decide(c, st, 5, 0, 5), 1);
  EXPECT_EQ(decide(c, st, 1, 0, 1), 0);
  c.downscaling_factor = 0.2;
  int n = 5;
  std::vector<int> seen;
  for (int i = 0; i < 5; ++i) seen.push_back(n = decide(c, st, n, 0, n));
  EXPECT_EQ(seen, (std::vector<int>{4, 3, 2, 1, 0}));
}

// test_upscale_downscale_delay, both downscale_to_zero_delay_s cases.
// Delays that are whole loops: both versions hold the same number of calls.
class UpscaleDownscaleDelay
    : public ::testing::TestWithParam<std::tuple<std::optional<double>, RayServeVersion>> {};

TEST_P(UpscaleDownscaleDelay, DecisionsWaitTheirDelayInLoops) {
  auto c = config(0, 2, 1, std::get<1>(GetParam()));
  c.upscale_delay_s = 30;
  c.downscale_delay_s = 600;
  c.downscale_to_zero_delay_s = std::get<0>(GetParam());
  const int up = 300, down = 6000, to_zero = std::get<0>(GetParam()) ? 3000 : 6000;
  ReplicaAutoscalingState st;
  EXPECT_EQ(bounded(c, st, 0, 1, 0), 1);  // cold start
  unchanged_for(c, st, up, 1, 100, 1);
  EXPECT_EQ(bounded(c, st, 1, 100, 1), 2) << "call 301";
  unchanged_for(c, st, down, 2, 0, 2);
  EXPECT_EQ(bounded(c, st, 2, 0, 2), 1) << "never below one but for 1 -> 0";
  unchanged_for(c, st, to_zero, 1, 0, 1);
  EXPECT_EQ(bounded(c, st, 1, 0, 1), 0);
  // A reversal starts the count again.
  EXPECT_EQ(bounded(c, st, 0, 1, 0), 1);
  unchanged_for(c, st, up / 2, 1, 100, 1);
  EXPECT_EQ(bounded(c, st, 1, 0, 1), 1);
  unchanged_for(c, st, up, 1, 100, 1);
  EXPECT_EQ(bounded(c, st, 1, 100, 1), 2);
  // An overload past the bounds ends a downscale in progress (2025-10-06:
  // bounded to the current target, it is "no change"; 2026-04-29: an
  // upscale streak the bounds take back).
  unchanged_for(c, st, down / 2, 2, 0, 2);
  EXPECT_EQ(bounded(c, st, 2, 200, 2), 2);
  unchanged_for(c, st, down, 2, 0, 2);
  EXPECT_EQ(bounded(c, st, 2, 0, 2), 1);
  unchanged_for(c, st, to_zero / 2, 1, 0, 1);
  EXPECT_EQ(bounded(c, st, 1, 100, 1), 1);
  unchanged_for(c, st, to_zero, 1, 0, 1);
  EXPECT_EQ(bounded(c, st, 1, 0, 1), 0);
}

INSTANTIATE_TEST_SUITE_P(ToZeroDelay, UpscaleDownscaleDelay,
                         ::testing::Combine(::testing::Values(std::nullopt, 300.0),
                                            ::testing::Values(RayServeVersion::k2025_10_06,
                                                              RayServeVersion::k2026_04_29)));

TEST_P(RayVersions, ReplicasDelayedStartup) {  // test_replicas_delayed_startup
  auto c = config(1, 200, 1);
  c.upscale_delay_s = 0;
  c.downscale_delay_s = 100000;
  ReplicaAutoscalingState st;
  EXPECT_EQ(decide(c, st, 1, 100, 1), 100);
  EXPECT_EQ(decide(c, st, 100, 100, 1), 100);
  EXPECT_EQ(decide(c, st, 100, 123, 3), 123);
  EXPECT_EQ(decide(c, st, 123, 10, 4), 123);
}

TEST_P(RayVersions, FluctuatingLoadNeverOutlastsItsDelay) {  // test_fluctuating_ongoing_requests
  for (double delay : {30.0, 0.0}) {
    auto c = config(1, 10, 50);
    c.upscale_delay_s = c.downscale_delay_s = delay;
    ReplicaAutoscalingState st;
    for (int trial = 0; trial < 1000; ++trial) {
      if (trial % 2 == 0) EXPECT_EQ(decide(c, st, 1, 100, 1), delay > 0 ? 1 : 2) << trial;
      else EXPECT_EQ(decide(c, st, 2, 40, 2), delay > 0 ? 2 : 1) << trial;
    }
  }
}

TEST_P(RayVersions, SingleReplicaReceivesAllRequests) {  // test_single_replica_receives_all_requests
  auto c = config(1, 50, 5);
  c.upscale_delay_s = c.downscale_delay_s = 0;
  for (auto [total, want] : {std::pair{20.0, 4}, {100.0, 20}, {10.0, 2}}) {
    ReplicaAutoscalingState st;
    EXPECT_EQ(decide(c, st, 4, total, 4), want) << total;
  }
}

TEST(RayReplicaAutoscaling, DelaysTruncateToWholeLoopsIn2025) {
  // int(0.3 / 0.1) is 2 in floating point: the third call scales.
  auto c = config(1, 10, 1, RayServeVersion::k2025_10_06);
  c.upscale_delay_s = 0.3;
  ReplicaAutoscalingState st;
  unchanged_for(c, st, 2, 1, 5, 1);
  EXPECT_EQ(decide(c, st, 1, 5, 1), 5);
}

// test_upscale_delay_uses_wall_clock_time and
// test_downscale_to_zero_delay_uses_wall_clock_time
// (test_autoscaling_policy.py:900-1110@5866967), on loops 0.1 s apart: a
// decision at 0.3 s after the streak's first has waited 0.3 s (0.3 + 1e-6 >=
// 0.3), the fourth; the step 1 -> 0 starts a streak of its own.
TEST(RayReplicaAutoscaling, DelaysAreWallClockTimeIn2026) {
  auto c = config(0, 10, 1);
  c.upscale_delay_s = 0.3;
  ReplicaAutoscalingState st;
  unchanged_for(c, st, 3, 1, 5, 1);
  EXPECT_EQ(decide(c, st, 1, 5, 1), 5) << "at +0.3 s";
  auto d = config(0, 10, 1);
  d.downscale_delay_s = 0.3;
  d.downscale_to_zero_delay_s = 0.4;
  ReplicaAutoscalingState ds;
  unchanged_for(d, ds, 3, 4, 0, 4);
  EXPECT_EQ(decide(d, ds, 4, 0, 4), 1) << "at +0.3 s, never below one but for 1 -> 0";
  unchanged_for(d, ds, 4, 1, 0, 1);
  EXPECT_EQ(decide(d, ds, 1, 0, 1), 0) << "at +0.4 s of a new streak";
  // The same delays under 2025-10-06: int(0.3 / 0.1) + 1 = 3 calls,
  // int(0.4 / 0.1) + 1 = 5.
  d.version = RayServeVersion::k2025_10_06;
  ReplicaAutoscalingState os;
  unchanged_for(d, os, 2, 4, 0, 4);
  EXPECT_EQ(decide(d, os, 4, 0, 4), 1);
  unchanged_for(d, os, 4, 1, 0, 1);
  EXPECT_EQ(decide(d, os, 1, 0, 1), 0);
}

TEST(RayReplicaAutoscaling, StreakLengthsOfBothVersions) {
  using V = RayServeVersion;
  // Worked by hand: 2025-10-06 int(d / 0.1) + 1; 2026-04-29 the first k
  // with (k - 1) x 0.1 + 1e-6 >= d.
  EXPECT_EQ(ray_streak_decisions(V::k2025_10_06, 0), 1);
  EXPECT_EQ(ray_streak_decisions(V::k2026_04_29, 0), 1);
  EXPECT_EQ(ray_streak_decisions(V::k2025_10_06, 0.3), 3);
  EXPECT_EQ(ray_streak_decisions(V::k2026_04_29, 0.3), 4);
  EXPECT_EQ(ray_streak_decisions(V::k2025_10_06, 0.7), 7);
  EXPECT_EQ(ray_streak_decisions(V::k2026_04_29, 0.7), 8);
  EXPECT_EQ(ray_streak_decisions(V::k2025_10_06, 0.05), 1);
  EXPECT_EQ(ray_streak_decisions(V::k2026_04_29, 0.05), 2);
  EXPECT_EQ(ray_streak_decisions(V::k2025_10_06, 30), 301);
  EXPECT_EQ(ray_streak_decisions(V::k2026_04_29, 30), 301);
  EXPECT_EQ(ray_streak_decisions(V::k2026_04_29, 600), 6001);
}

// A desired count past the bounds under 2026-04-29: the streak runs its
// delay, the bounds take the change back, and the target stays for good.
TEST(RayReplicaAutoscaling, AStreakTheBoundsTakeBackNeverChangesTheTarget) {
  auto c = config(0, 4, 1);
  c.upscale_delay_s = 0.3;
  ReplicaAutoscalingState st;
  for (int i = 0; i < 20; ++i)
    ASSERT_EQ(std::clamp(decide(c, st, 4, 100, 4), 0, 4), 4) << i;
  EXPECT_EQ(ray()->loops_until_change(c, ReplicaLoad{4, 4, 100}, st, 1000), 0);
}

// The closed forms the ray variant gives for a constant load agree with the
// decisions made one by one (the base class's way).
TEST_P(RayVersions, ClosedFormsAgreeWithOneDecisionAtATime) {
  const auto p = ray();
  int checked = 0;
  for (int min : {0, 2})
  for (int target : {0, 1, 2, 5, 8})
    for (int running : {0, 1, 3})
      for (double total : {0.0, 0.5, 2.0, 7.0, 40.0})
        for (int counter : {-70, -1, 0, 1, 25})
          for (std::optional<double> to_zero : {std::optional<double>(), std::optional<double>(3.0)}) {
            if (target < min) continue;
            auto c = config(min, 8, 2);
            c.upscale_delay_s = 3;
            c.downscale_delay_s = 6;
            c.downscale_to_zero_delay_s = to_zero;
            const ReplicaLoad load{target, running, total};
            const ReplicaAutoscalingState st{counter};
            for (std::int64_t limit : {1, 10, 1000}) {
              EXPECT_EQ(p->loops_until_change(c, load, st, limit),
                        p->ReplicaAutoscalingPolicy::loops_until_change(c, load, st, limit))
                  << target << " " << running << " " << total << " " << counter << " " << limit;
            }
            const std::int64_t k = p->ReplicaAutoscalingPolicy::loops_until_change(c, load, st, 1000);
            for (std::int64_t n : {1, 2, 7}) {
              if (k != 0 && n >= k) continue;  // repeat() is for loops that change nothing
              ReplicaAutoscalingState a = st, b = st;
              p->repeat(c, load, a, n);
              p->ReplicaAutoscalingPolicy::repeat(c, load, b, n);
              EXPECT_EQ(a.decision_counter, b.decision_counter) << target << " " << running << " " << total;
              ++checked;
            }
          }
  EXPECT_GT(checked, 1000);
}

// aggregate_timeseries (test_metrics_utils.py:213-289@5866967, window end
// last_window_s = 1 s after the last point): one series as it is.
TEST(RayReplicaAutoscaling, TheControllersAggregateOfOneSeriesIsRays) {
  using S = std::vector<std::pair<SimTime, int>>;
  const auto at = [](double t) { return seconds(t); };
  const S one{{at(1), 5}}, two{{at(1), 5}, {at(2), 10}}, three{{at(1), 5}, {at(2), 10}, {at(3), 15}};
  using A = MetricAggregation;
  EXPECT_EQ(aggregate_handle_samples({}, false, at(5), A::kMean), 0);
  EXPECT_DOUBLE_EQ(aggregate_handle_samples(one, false, at(2), A::kMean), 5.0);
  EXPECT_DOUBLE_EQ(aggregate_handle_samples(two, false, at(3), A::kMean), 7.5);
  EXPECT_DOUBLE_EQ(aggregate_handle_samples(two, false, at(3), A::kMax), 10.0);
  EXPECT_DOUBLE_EQ(aggregate_handle_samples(two, false, at(3), A::kMin), 5.0);
  EXPECT_DOUBLE_EQ(aggregate_handle_samples(three, false, at(4), A::kMean), 10.0);
  EXPECT_DOUBLE_EQ(aggregate_handle_samples(three, false, at(4), A::kMax), 15.0);
  EXPECT_DOUBLE_EQ(aggregate_handle_samples(three, false, at(4), A::kMin), 5.0);
  // The time-weighted average with the last value held to now
  // (test_metrics_utils.py:416-516: last_window 2 s gives (5 + 10 + 30) / 4).
  EXPECT_DOUBLE_EQ(aggregate_handle_samples(three, false, at(5), A::kMean), 11.25);
  // A handle's queued samples every 6 s, the controller at 30 s: the mean of
  // the step function is that of the samples, (0 + 0 + 4 + 4 + 2) / 5.
  const S queued{{at(0), 0}, {at(6), 0}, {at(12), 4}, {at(18), 4}, {at(24), 2}};
  EXPECT_DOUBLE_EQ(aggregate_handle_samples(queued, false, at(30), A::kMean), 2.0);
  EXPECT_DOUBLE_EQ(aggregate_handle_samples(queued, false, at(30), A::kMin), 0.0);
  // Several series merge into points where the total moves, from 0: the
  // window starts at 12 s, (4 x 12 + 2 x 6) / 18 (worked by hand).
  EXPECT_DOUBLE_EQ(aggregate_handle_samples(queued, true, at(30), A::kMean), 60.0 / 18.0);
  EXPECT_DOUBLE_EQ(aggregate_handle_samples(queued, true, at(30), A::kMin), 2.0);
  EXPECT_DOUBLE_EQ(aggregate_handle_samples(queued, true, at(30), A::kMax), 4.0);
  // Only zeros: no point, 0.
  EXPECT_EQ(aggregate_handle_samples(S{{at(0), 0}, {at(6), 0}}, true, at(10), A::kMean), 0);
  // The controller at the last point's own time: 1 ms of it.
  EXPECT_NEAR(aggregate_handle_samples(two, false, at(2), A::kMean), (5 * 1.0 + 10 * 0.001) / 1.001, 1e-12);
}

TEST(RayReplicaAutoscaling, RecordIntervalOfEachVersion) {
  RayServeSettings s;
  // min(0.2 x look_back_period_s, metrics_interval_s) (router.py:293-303@5866967).
  EXPECT_DOUBLE_EQ(s.record_interval(30, 10), 6);
  EXPECT_DOUBLE_EQ(s.record_interval(100, 10), 10);
  EXPECT_DOUBLE_EQ(s.record_interval(10, 2), 2);
  s.record_interval_factor = 0.05;
  EXPECT_DOUBLE_EQ(s.record_interval(30, 10), 1.5);
  s.version = RayServeVersion::k2025_10_06;
  EXPECT_DOUBLE_EQ(s.record_interval(30, 10), 0.5);
}

TEST(RayReplicaAutoscaling, DefaultsAreRays) {
  const ReplicaAutoscalingConfig c;
  EXPECT_EQ(c.min_replicas, 1);
  EXPECT_EQ(c.max_replicas, 1);
  EXPECT_EQ(c.target_ongoing_requests, 2);
  EXPECT_EQ(c.upscale_delay_s, 30);
  EXPECT_EQ(c.downscale_delay_s, 600);
  EXPECT_EQ(c.metrics_interval_s, 10);
  EXPECT_EQ(c.look_back_period_s, 30);
  EXPECT_EQ(c.upscaling(), 1);
  EXPECT_FALSE(c.downscale_to_zero_delay_s);
  EXPECT_DOUBLE_EQ(kControlLoopIntervalS, 0.1);
}

}  // namespace
}  // namespace vramsim
