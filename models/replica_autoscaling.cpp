#include "models/replica_autoscaling.hpp"

#include <algorithm>
#include <cmath>

#include "models/registry.hpp"

namespace vramsim {

int ray_desired_replicas(const ReplicaAutoscalingConfig& cfg, double total, int running) {
  // _calculate_desired_num_replicas: the error ratio of the load against
  // the target per running replica, smoothed by the factor of its direction.
  const int n = std::max(running, 1);
  const double error = total / (cfg.target_ongoing_requests * n);
  const double factor = error >= 1 ? cfg.upscaling() : cfg.downscaling();
  const double smoothed = 1 + (error - 1) * factor;
  // ceil(n + factor x (raw - n)), raw = total / target: one ceil both ways.
  const double desired = std::ceil(n * smoothed);
  int out = desired > 1e9 ? 1000000000 : static_cast<int>(desired);
  // A factor too small to remove a whole replica still removes one.
  if (std::ceil(total / cfg.target_ongoing_requests) < n && out == n) out = n - 1;
  return std::clamp(out, cfg.min_replicas, cfg.max_replicas);
}

namespace {

// Ray Serve's replica_queue_length_autoscaling_policy.
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
    int desired = ray_desired_replicas(cfg, load.total_ongoing_requests, load.running_replicas);
    // Except for the last step 1 -> 0, a downscale stops at one replica.
    if (desired == 0 && current > 1) desired = 1;
    if (desired > current) {
      if (st.decision_counter < 0) st.decision_counter = 0;
      ++st.decision_counter;
      if (st.decision_counter > loops(cfg.upscale_delay_s)) {
        st.decision_counter = 0;
        return desired;
      }
    } else if (desired < current) {
      if (st.decision_counter > 0) st.decision_counter = 0;
      --st.decision_counter;
      const double delay =
          current == 1 && desired == 0 ? cfg.downscale_to_zero_delay_s.value_or(cfg.downscale_delay_s)
                                       : cfg.downscale_delay_s;
      if (st.decision_counter < -loops(delay)) {
        st.decision_counter = 0;
        return desired;
      }
    } else {
      st.decision_counter = 0;
    }
    return current;
  }

 private:
  // int(delay_s / CONTROL_LOOP_INTERVAL_S), truncated as Ray's int() does
  // (so 0.3 s is 2 loops: 0.3 / 0.1 is 2.9999999999999996).
  static int loops(double delay_s) { return static_cast<int>(delay_s / kControlLoopIntervalS); }
};

}  // namespace

void register_replica_autoscaling_policies(PolicyRegistry& r) {
  r.add<ReplicaAutoscalingPolicy, RayReplicaAutoscaling>("ray");
}

}  // namespace vramsim
