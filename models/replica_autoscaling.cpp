#include "models/replica_autoscaling.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "models/registry.hpp"

namespace vramsim {

const char* version_name(RayServeVersion v) {
  return v == RayServeVersion::k2025_10_06 ? "2025-10-06" : "2026-04-29";
}

const char* aggregation_name(MetricAggregation a) {
  return a == MetricAggregation::kMean ? "mean" : a == MetricAggregation::kMax ? "max" : "min";
}

double RayServeSettings::record_interval(double look_back_period_s, double metrics_interval_s) const {
  // router.py:293-303@5866967 (and replica.py:671-680): the record task's
  // interval; before 41ddcb7044 a constant.
  if (version == RayServeVersion::k2025_10_06) return record_interval_s;
  return std::min(look_back_period_s * record_interval_factor, metrics_interval_s);
}

double aggregate_handle_samples(const std::vector<std::pair<SimTime, int>>& samples, bool several_series, SimTime now,
                                MetricAggregation f) {
  // One pass over the points: every sample of one series, the moves of the
  // total from 0 of several.
  bool any = false;
  SimTime first = 0, prev_t = 0;
  int prev_v = 0, hi = 0, lo = 0;
  double weighted = 0;  // value x seconds from the first point to the last
  for (const auto& [t, v] : samples) {
    if (several_series && v == prev_v) continue;
    if (any) weighted += static_cast<double>(prev_v) * to_seconds(t - prev_t);
    else first = t, hi = lo = v;
    any = true;
    hi = std::max(hi, v);
    lo = std::min(lo, v);
    prev_t = t;
    prev_v = v;
  }
  if (!any) return 0;
  if (f == MetricAggregation::kMax) return hi;
  if (f == MetricAggregation::kMin) return lo;
  const Duration tail = std::max<Duration>(now - prev_t, seconds(1e-3));  // last_window_s
  weighted += static_cast<double>(prev_v) * to_seconds(tail);
  return weighted / to_seconds(prev_t - first + tail);
}

std::optional<MetricAggregation> aggregation_from_name(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  for (MetricAggregation a : {MetricAggregation::kMean, MetricAggregation::kMax, MetricAggregation::kMin})
    if (name == aggregation_name(a)) return a;
  return std::nullopt;
}

std::size_t RayServeSettings::samples_per_window(double look_back_period_s, double metrics_interval_s) const {
  // The samples newer than look_back_period_s when a push prunes the store:
  // one per record interval (metrics_utils.py:166-193@5866967).
  const double n = look_back_period_s / record_interval(look_back_period_s, metrics_interval_s);
  return n >= 1e15 ? static_cast<std::size_t>(1e15) : static_cast<std::size_t>(std::max(1.0, std::ceil(n - 1e-9)));
}

int ray_desired_replicas(const ReplicaAutoscalingConfig& cfg, double total, int running) {
  const int n = std::max(running, 1);
  double desired = 0;
  if (cfg.version == RayServeVersion::k2025_10_06) {
    // _calculate_desired_num_replicas: the error ratio of the load against
    // the target per running replica, smoothed by the factor of its direction.
    const double error = total / (cfg.target_ongoing_requests * n);
    const double factor = error >= 1 ? cfg.upscaling() : cfg.downscaling();
    const double smoothed = 1 + (error - 1) * factor;
    // ceil(n + factor x (raw - n)), raw = total / target: one ceil both ways.
    desired = std::ceil(n * smoothed);
  } else {
    // _core_replica_queue_length_policy then _apply_scaling_factors
    // (autoscaling_policy.py:25-57, 326-336@5866967): raw = total / target,
    // ceil(cur + f x (raw - cur)) with f of the direction of raw - cur.
    const double raw = total / cfg.target_ongoing_requests;
    const double delta = raw - n;
    desired = std::ceil(n + (delta > 0 ? cfg.upscaling() : cfg.downscaling()) * delta);
  }
  int out = desired > 1e9 ? 1000000000 : static_cast<int>(desired);
  // A factor too small to remove a whole replica still removes one.
  if (std::ceil(total / cfg.target_ongoing_requests) < n && out == n) out = n - 1;
  if (cfg.version == RayServeVersion::k2025_10_06) return std::clamp(out, cfg.min_replicas, cfg.max_replicas);
  return std::max(out, 0);
}

std::int64_t ray_streak_decisions(RayServeVersion v, double delay_s) {
  // int(delay_s / CONTROL_LOOP_INTERVAL_S), truncated as Ray's int() does
  // (so 0.3 s is 2 loops: 0.3 / 0.1 is 2.9999999999999996), then one more.
  if (v == RayServeVersion::k2025_10_06) return static_cast<std::int64_t>(delay_s / kControlLoopIntervalS) + 1;
  // In whole microseconds: (k - 1) x 0.1 s + 1 us >= delay_s.
  const auto delay_us = static_cast<std::int64_t>(std::llround(delay_s * 1e6));
  const std::int64_t loop_us = std::llround(kControlLoopIntervalS * 1e6);
  const std::int64_t after_first = std::max<std::int64_t>(0, delay_us - 1);
  return 1 + (after_first + loop_us - 1) / loop_us;
}

std::int64_t ReplicaAutoscalingPolicy::loops_until_change(const ReplicaAutoscalingConfig& cfg,
                                                          const ReplicaLoad& load, ReplicaAutoscalingState st,
                                                          std::int64_t limit) const {
  for (std::int64_t k = 1; k <= limit; ++k) {
    const int before = st.decision_counter;
    if (std::clamp(decide(cfg, load, st), cfg.min_replicas, cfg.max_replicas) != load.target_replicas) return k;
    if (st.decision_counter == before) return 0;  // a fixed point
  }
  return 0;
}

void ReplicaAutoscalingPolicy::repeat(const ReplicaAutoscalingConfig& cfg, const ReplicaLoad& load,
                                      ReplicaAutoscalingState& st, std::int64_t n) const {
  for (std::int64_t k = 0; k < n; ++k) decide(cfg, load, st);
}

namespace {

// Ray Serve's replica_queue_length_autoscaling_policy with the delays of
// its default wrapper, in the version cfg.version names.
class RayReplicaAutoscaling final : public ReplicaAutoscalingPolicy {
 public:
  int decide(const ReplicaAutoscalingConfig& cfg, const ReplicaLoad& load,
             ReplicaAutoscalingState& st) const override {
    const int current = load.target_replicas;
    if (load.running_replicas == 0) {
      // Cold start: any request decides at once, skipping the delays and
      // leaving the counter; the caller bounds it (apply_bounds).
      if (load.total_ongoing_requests > 0)
        return std::max(static_cast<int>(std::ceil(1 * cfg.upscaling())), current);
      return current;
    }
    const int desired = wanted(cfg, load);
    if (desired > current) {
      if (st.decision_counter < 0) st.decision_counter = 0;
      ++st.decision_counter;
      if (st.decision_counter >= ray_streak_decisions(cfg.version, cfg.upscale_delay_s)) {
        st.decision_counter = 0;
        return desired;
      }
    } else if (desired < current) {
      if (st.decision_counter > 0) st.decision_counter = 0;
      --st.decision_counter;
      if (-st.decision_counter >= ray_streak_decisions(cfg.version, down_delay(cfg, current, desired))) {
        st.decision_counter = 0;
        return desired;
      }
    } else {
      st.decision_counter = 0;
    }
    return current;
  }

  // With the load constant the desired count is too, so the counter moves by
  // one a loop in one direction from the first decision on: closed forms of
  // the loops the base class would make one by one. Where the streak ends in
  // a count the bounds take back (k2026_04_29, a desired count past them),
  // the target never changes and the streak starts over each time.
  std::int64_t loops_until_change(const ReplicaAutoscalingConfig& cfg, const ReplicaLoad& load,
                                  ReplicaAutoscalingState st, std::int64_t limit) const override {
    if (limit <= 0) return 0;
    const int first = std::clamp(decide(cfg, load, st), cfg.min_replicas, cfg.max_replicas);
    if (first != load.target_replicas) return 1;
    if (load.running_replicas == 0 || st.decision_counter == 0 || takes_back(cfg, load)) return 0;
    const std::int64_t k = streak(cfg, load) - std::abs(st.decision_counter) + 1;
    return k <= limit ? k : 0;
  }
  void repeat(const ReplicaAutoscalingConfig& cfg, const ReplicaLoad& load, ReplicaAutoscalingState& st,
              std::int64_t n) const override {
    if (n <= 0) return;
    decide(cfg, load, st);
    if (load.running_replicas == 0 || (st.decision_counter == 0 && !takes_back(cfg, load))) return;
    const int sign = wanted(cfg, load) > load.target_replicas ? 1 : -1;
    std::int64_t done = std::abs(st.decision_counter) + (n - 1);
    // A streak the bounds take back ends at `streak` decisions with the
    // counter at 0, and the next decision starts another.
    if (takes_back(cfg, load)) done %= streak(cfg, load);
    st.decision_counter = static_cast<int>(sign * done);
  }

 private:
  // The desired count the delays compare with the target: except for the
  // last step 1 -> 0, a downscale stops at one replica.
  static int wanted(const ReplicaAutoscalingConfig& cfg, const ReplicaLoad& load) {
    int desired = ray_desired_replicas(cfg, load.total_ongoing_requests, load.running_replicas);
    if (desired < load.target_replicas && load.target_replicas > 1) desired = std::max(desired, 1);
    return desired;
  }
  static double down_delay(const ReplicaAutoscalingConfig& cfg, int current, int desired) {
    return current == 1 && desired == 0 ? cfg.downscale_to_zero_delay_s.value_or(cfg.downscale_delay_s)
                                        : cfg.downscale_delay_s;
  }
  // The decisions of a streak over `load` held constant.
  static std::int64_t streak(const ReplicaAutoscalingConfig& cfg, const ReplicaLoad& load) {
    const int desired = wanted(cfg, load);
    return ray_streak_decisions(cfg.version, desired > load.target_replicas
                                                 ? cfg.upscale_delay_s
                                                 : down_delay(cfg, load.target_replicas, desired));
  }
  // Whether a streak over `load` ends in a count the bounds make the target
  // again (only where the desired count is not bounded first).
  static bool takes_back(const ReplicaAutoscalingConfig& cfg, const ReplicaLoad& load) {
    const int desired = wanted(cfg, load);
    return desired != load.target_replicas &&
           std::clamp(desired, cfg.min_replicas, cfg.max_replicas) == load.target_replicas;
  }
};

}  // namespace

void register_replica_autoscaling_policies(PolicyRegistry& r) {
  r.add<ReplicaAutoscalingPolicy, RayReplicaAutoscaling>("ray");
}

}  // namespace vramsim
