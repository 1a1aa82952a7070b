#pragma once
// Replica autoscaling: how many replicas an app's deployment should run, from
// the requests it holds. A policy is a pure function of the deployment's
// autoscaling config, a snapshot of its load and its own small state (the
// delay counter), decided once per controller loop (kControlLoopIntervalS).
// The `ray` variant is Ray Serve's default policy (docs/serving.md lists the
// facts and where in Ray's source each comes from).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/time.hpp"

namespace vramsim {

// Ray Serve's CONTROL_LOOP_INTERVAL_S: one autoscaling decision per loop.
constexpr double kControlLoopIntervalS = 0.1;
// RAY_SERVE_HANDLE_AUTOSCALING_METRIC_RECORD_INTERVAL_S until 41ddcb7044: a
// handle sampled its load this often.
constexpr double kMetricRecordIntervalS = 0.5;
// RAY_SERVE_AUTOSCALING_METRIC_RECORD_INTERVAL_FACTOR since 41ddcb7044: a
// handle samples every min(factor x look_back_period_s, metrics_interval_s).
constexpr double kMetricRecordIntervalFactor = 0.2;

// Which Ray Serve's replica autoscaling is followed (the scenario's
// `ray_serve.version`, docs/serving.md): Ray's master branch between two
// changes of it.
enum class RayServeVersion {
  // 05a393b89c (2025-10-06) to 41ddcb7044 (2026-03-09): the handle samples
  // every 0.5 s; the delays count loops (`int(delay_s / 0.1)` of them); the
  // desired count is bounded before the delays.
  k2025_10_06,
  // 5866967ffd (2026-04-29): samples every min(0.2 x look_back_period_s,
  // metrics_interval_s); the delays are wall-clock time (c1b78613cc); the
  // bounds come after the delays (562aab153e).
  k2026_04_29,
};
// The names the scenario format takes, oldest first.
const char* version_name(RayServeVersion v);

// How the controller totals the handles' reports (aggregation_function).
enum class MetricAggregation { kMean, kMax, kMin };
const char* aggregation_name(MetricAggregation a);
// "mean", "max" or "min" in any case, as config.py:680-685@5866967 reads it.
std::optional<MetricAggregation> aggregation_from_name(std::string name);

// Settings of the Ray Serve installation rather than of a deployment: its
// version and the environment variables of its controller and handles.
struct RayServeSettings {
  RayServeVersion version = RayServeVersion::k2026_04_29;
  // RAY_SERVE_AGGREGATE_METRICS_AT_CONTROLLER=1: the controller merges the
  // handles' sample series and aggregates them (aggregation_function) up to
  // the decision's time; otherwise it sums the handles' averages.
  bool aggregate_at_controller = false;
  double record_interval_factor = kMetricRecordIntervalFactor;  // k2026_04_29
  double record_interval_s = kMetricRecordIntervalS;            // k2025_10_06
  // The interval a handle samples at for a deployment of this config.
  double record_interval(double look_back_period_s, double metrics_interval_s) const;
  // The samples a handle's look-back window holds (at least 1).
  std::size_t samples_per_window(double look_back_period_s, double metrics_interval_s) const;
};

// Ray Serve's AutoscalingConfig, by its names and defaults.
struct ReplicaAutoscalingConfig {
  int min_replicas = 1;
  int max_replicas = 1;
  std::optional<int> initial_replicas;
  double target_ongoing_requests = 2;
  double metrics_interval_s = 10;
  double look_back_period_s = 30;
  double upscale_delay_s = 30;
  double downscale_delay_s = 600;
  std::optional<double> downscale_to_zero_delay_s;  // none: downscale_delay_s
  double smoothing_factor = 1;
  std::optional<double> upscaling_factor;    // none: smoothing_factor
  std::optional<double> downscaling_factor;  // none: smoothing_factor
  std::string policy = "ray";
  // Used where the controller aggregates (RayServeSettings::aggregate_at_controller).
  MetricAggregation aggregation_function = MetricAggregation::kMean;
  // The installation's version (RayServeSettings::version; the controller sets it).
  RayServeVersion version = RayServeVersion::k2026_04_29;

  double upscaling() const { return upscaling_factor.value_or(smoothing_factor); }
  double downscaling() const { return downscaling_factor.value_or(smoothing_factor); }
  // The replica count a deployment starts with: initial_replicas, else min.
  int starting_replicas() const { return initial_replicas.value_or(min_replicas); }
};

// What the controller knows when it decides.
struct ReplicaLoad {
  int target_replicas = 0;          // the current target (what was last decided)
  int running_replicas = 0;         // replicas RUNNING now
  double total_ongoing_requests = 0;  // queued at handles + on replicas, averaged over the look-back
};

// Kept between decisions of one deployment.
struct ReplicaAutoscalingState {
  int decision_counter = 0;  // > 0: consecutive loops that wanted more; < 0: fewer
};

class ReplicaAutoscalingPolicy {
 public:
  static constexpr const char* kModel = "replica_autoscaling";
  virtual ~ReplicaAutoscalingPolicy() = default;
  // The new target replica count (== load.target_replicas: no change),
  // before the caller bounds it to [min_replicas, max_replicas].
  virtual int decide(const ReplicaAutoscalingConfig& cfg, const ReplicaLoad& load,
                     ReplicaAutoscalingState& state) const = 0;
  // Over `load` held constant: how many decisions from `state` until the
  // first whose target, bounded to [min, max], differs from
  // load.target_replicas (that one included); 0 when none ever does, or
  // none within `limit`. The default makes the decisions one by one.
  virtual std::int64_t loops_until_change(const ReplicaAutoscalingConfig& cfg, const ReplicaLoad& load,
                                          ReplicaAutoscalingState state, std::int64_t limit) const;
  // `n` decisions over `load` held constant, none of which changes the
  // target (the caller knows from loops_until_change): their effect on
  // `state`. The default makes them one by one.
  virtual void repeat(const ReplicaAutoscalingConfig& cfg, const ReplicaLoad& load, ReplicaAutoscalingState& state,
                      std::int64_t n) const;
};

// The controller's aggregate mode (_calculate_total_requests_aggregate_mode
// and _merge_and_aggregate_timeseries, autoscaling_state.py:469-634;
// metrics_utils.py:334-401@5866967) over one handle's samples of its total
// (queued plus running), oldest first, as of its last push: the series merged
// into a step function held from each point to the next, the last up to
// `now` (at least 1 ms). One series (the queued requests alone: no replica
// yet sent a request) is taken as it is; several (a replica's running
// requests beside it) merge into a point only where the total moves, from an
// implicit 0, so the window starts at the first nonzero sample. `mean` is the
// step function's time-weighted average, `max`/`min` the extremes of its
// points; no point is 0. Replica series that start later than the queued
// one (a replica first sent a request within the window) are not told
// apart: the window's start stays the first nonzero sample.
double aggregate_handle_samples(const std::vector<std::pair<SimTime, int>>& samples, bool several_series, SimTime now,
                                MetricAggregation f);

// Ray's desired count before the delays: the running count scaled by the
// load's error ratio and the scaling factor, rounded up; bounded to [min,
// max] in k2025_10_06, not in k2026_04_29 (its bounds come after the delays).
int ray_desired_replicas(const ReplicaAutoscalingConfig& cfg, double total_ongoing_requests, int running_replicas);
// The decisions of one streak (the one that starts it included) after which
// a delay of `delay_s` has passed and the target changes: int(delay_s / 0.1)
// + 1 in k2025_10_06; in k2026_04_29 the first loop whose time since the
// streak's first is at least delay_s - 1 us (autoscaling_policy.py:18-22,
// 84-133@5866967: now - start + 1e-6 >= delay_s), loops 0.1 s apart.
std::int64_t ray_streak_decisions(RayServeVersion v, double delay_s);

}  // namespace vramsim
