// Ray Serve's replica autoscaling policy, checked on the inputs and outputs
// of Ray's own unit tests (python/ray/serve/tests/unit/
// test_autoscaling_policy.py; docs/serving.md lists the version read). Each
// test names the Ray test it reproduces.
#include "models/replica_autoscaling.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "models/registry.hpp"

namespace vramsim {
namespace {

std::shared_ptr<const ReplicaAutoscalingPolicy> ray() {
  return PolicyRegistry::instance().make<ReplicaAutoscalingPolicy>("ray");
}

ReplicaAutoscalingConfig config(int min, int max, double target) {
  ReplicaAutoscalingConfig c;
  c.min_replicas = min;
  c.max_replicas = max;
  c.target_ongoing_requests = target;
  return c;
}

// One policy call as Ray's tests make it: (target, total, running).
int decide(const ReplicaAutoscalingConfig& c, ReplicaAutoscalingState& st, int target, double total, int running) {
  return ray()->decide(c, ReplicaLoad{target, running, total}, st);
}

// `n` calls with the same inputs; every one must return `target`.
void unchanged_for(const ReplicaAutoscalingConfig& c, ReplicaAutoscalingState& st, int n, int target, double total,
                   int running) {
  for (int i = 0; i < n; ++i) ASSERT_EQ(decide(c, st, target, total, running), target) << "call " << i + 1;
}

TEST(RayReplicaAutoscaling, BoundsChecking) {  // test_bounds_checking
  const auto c = config(9, 11, 100);
  EXPECT_EQ(ray_desired_replicas(c, 1500, 10), 11);
  EXPECT_EQ(ray_desired_replicas(c, 500, 10), 9);
  for (double total = 500; total <= 1490; total += 10) {
    const int d = ray_desired_replicas(c, total, 10);
    EXPECT_GE(d, 9);
    EXPECT_LE(d, 11);
  }
}

TEST(RayReplicaAutoscaling, ScaleUpAndDownByTheErrorRatio) {  // test_scale_up, test_scale_down
  for (double t : {0.5, 1.0, 1.5}) {
    const auto c = config(0, 100, t);
    EXPECT_EQ(ray_desired_replicas(c, 2 * t * 10, 10), 20) << t;
    EXPECT_EQ(ray_desired_replicas(c, 0.5 * t * 10, 10), 5) << t;
  }
}

TEST(RayReplicaAutoscaling, SmoothingFactorAppliesBothWays) {  // test_scaling_factor
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

TEST(RayReplicaAutoscaling, UpscalingAndDownscalingFactorsApart) {  // test_upscaling_factor, test_downscaling_factor
  auto up = config(0, 100, 2);
  up.upscaling_factor = 0.5;
  EXPECT_EQ(ray_desired_replicas(up, 80, 10), 25);
  EXPECT_EQ(ray_desired_replicas(up, 2.5, 10), 2);  // down factor 1: ceil(1.25)
  auto down = config(0, 100, 2);
  down.downscaling_factor = 0.5;
  EXPECT_EQ(ray_desired_replicas(down, 80, 10), 40);
  EXPECT_EQ(ray_desired_replicas(down, 2.5, 10), 6);
}

TEST(RayReplicaAutoscaling, AFractionalDownscaleStillRemovesOne) {  // test_downscaling_with_fractional_scaling_factor
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

TEST(RayReplicaAutoscaling, ColdStartScalesAtOnceByTheUpscalingFactor) {  // test_scaling_factor_scale_up_from_0_replicas
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

TEST(RayReplicaAutoscaling, ScaleDownToZeroGoesThroughOne) {  // test_scaling_factor_scale_down_to_0_replicas
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
class UpscaleDownscaleDelay : public ::testing::TestWithParam<std::optional<double>> {};

TEST_P(UpscaleDownscaleDelay, DecisionsWaitTheirDelayInLoops) {
  auto c = config(0, 2, 1);
  c.upscale_delay_s = 30;
  c.downscale_delay_s = 600;
  c.downscale_to_zero_delay_s = GetParam();
  const int up = 300, down = 6000, to_zero = GetParam() ? 3000 : 6000;
  ReplicaAutoscalingState st;
  EXPECT_EQ(decide(c, st, 0, 1, 0), 1);  // cold start
  unchanged_for(c, st, up, 1, 100, 1);
  EXPECT_EQ(decide(c, st, 1, 100, 1), 2) << "call 301";
  unchanged_for(c, st, down, 2, 0, 2);
  EXPECT_EQ(decide(c, st, 2, 0, 2), 1) << "never below one but for 1 -> 0";
  unchanged_for(c, st, to_zero, 1, 0, 1);
  EXPECT_EQ(decide(c, st, 1, 0, 1), 0);
  // A reversal starts the count again.
  EXPECT_EQ(decide(c, st, 0, 1, 0), 1);
  unchanged_for(c, st, up / 2, 1, 100, 1);
  EXPECT_EQ(decide(c, st, 1, 0, 1), 1);
  unchanged_for(c, st, up, 1, 100, 1);
  EXPECT_EQ(decide(c, st, 1, 100, 1), 2);
  // An overload bounded to the current target is "no change": it zeroes a
  // downscale in progress.
  unchanged_for(c, st, down / 2, 2, 0, 2);
  EXPECT_EQ(decide(c, st, 2, 200, 2), 2);
  unchanged_for(c, st, down, 2, 0, 2);
  EXPECT_EQ(decide(c, st, 2, 0, 2), 1);
  unchanged_for(c, st, to_zero / 2, 1, 0, 1);
  EXPECT_EQ(decide(c, st, 1, 100, 1), 1);
  unchanged_for(c, st, to_zero, 1, 0, 1);
  EXPECT_EQ(decide(c, st, 1, 0, 1), 0);
}

INSTANTIATE_TEST_SUITE_P(ToZeroDelay, UpscaleDownscaleDelay, ::testing::Values(std::nullopt, 300.0));

TEST(RayReplicaAutoscaling, ReplicasDelayedStartup) {  // test_replicas_delayed_startup
  auto c = config(1, 200, 1);
  c.upscale_delay_s = 0;
  c.downscale_delay_s = 100000;
  ReplicaAutoscalingState st;
  EXPECT_EQ(decide(c, st, 1, 100, 1), 100);
  EXPECT_EQ(decide(c, st, 100, 100, 1), 100);
  EXPECT_EQ(decide(c, st, 100, 123, 3), 123);
  EXPECT_EQ(decide(c, st, 123, 10, 4), 123);
}

TEST(RayReplicaAutoscaling, FluctuatingLoadNeverOutlastsItsDelay) {  // test_fluctuating_ongoing_requests
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

TEST(RayReplicaAutoscaling, SingleReplicaReceivesAllRequests) {  // test_single_replica_receives_all_requests
  auto c = config(1, 50, 5);
  c.upscale_delay_s = c.downscale_delay_s = 0;
  for (auto [total, want] : {std::pair{20.0, 4}, {100.0, 20}, {10.0, 2}}) {
    ReplicaAutoscalingState st;
    EXPECT_EQ(decide(c, st, 4, total, 4), want) << total;
  }
}

TEST(RayReplicaAutoscaling, DelaysTruncateToWholeLoopsAsRayDoes) {
  // int(0.3 / 0.1) is 2 in floating point: the third call scales.
  auto c = config(1, 10, 1);
  c.upscale_delay_s = 0.3;
  ReplicaAutoscalingState st;
  unchanged_for(c, st, 2, 1, 5, 1);
  EXPECT_EQ(decide(c, st, 1, 5, 1), 5);
}

// The closed forms the ray variant gives for a constant load agree with the
// decisions made one by one (the base class's way).
TEST(RayReplicaAutoscaling, ClosedFormsAgreeWithOneDecisionAtATime) {
  const auto p = ray();
  int checked = 0;
  for (int target : {0, 1, 2, 5})
    for (int running : {0, 1, 3})
      for (double total : {0.0, 0.5, 2.0, 7.0, 40.0})
        for (int counter : {-70, -1, 0, 1, 25})
          for (std::optional<double> to_zero : {std::optional<double>(), std::optional<double>(3.0)}) {
            auto c = config(0, 8, 2);
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
  EXPECT_GT(checked, 500);
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
