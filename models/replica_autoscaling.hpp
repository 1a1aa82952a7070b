#pragma once
// Replica autoscaling: how many replicas an app's deployment should run, from
// the requests it holds. A policy is a pure function of the deployment's
// autoscaling config, a snapshot of its load and its own small state (the
// delay counter), decided once per controller loop (kControlLoopIntervalS).
// The `ray` variant is Ray Serve's default policy (docs/serving.md lists the
// facts and where in Ray's source each comes from).
#include <cstdint>
#include <optional>
#include <string>

namespace vramsim {

// Ray Serve's CONTROL_LOOP_INTERVAL_S: one autoscaling decision per loop.
constexpr double kControlLoopIntervalS = 0.1;
// RAY_SERVE_HANDLE_AUTOSCALING_METRIC_RECORD_INTERVAL_S: a handle samples its
// load this often and pushes the look-back average every metrics_interval_s.
constexpr double kMetricRecordIntervalS = 0.5;

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

// Ray's desired count before the delays: the running count scaled by the
// load's error ratio and the scaling factor, rounded up, bounded.
int ray_desired_replicas(const ReplicaAutoscalingConfig& cfg, double total_ongoing_requests, int running_replicas);

}  // namespace vramsim
