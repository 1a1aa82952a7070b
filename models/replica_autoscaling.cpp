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

  // With the load constant the desired count is too, so the counter moves by
  // one a loop in one direction from the first decision on: closed forms of
  // the loops the base class would make one by one.
  std::int64_t loops_until_change(const ReplicaAutoscalingConfig& cfg, const ReplicaLoad& load,
                                  ReplicaAutoscalingState st, std::int64_t limit) const override {
    if (limit <= 0) return 0;
    const int first = std::clamp(decide(cfg, load, st), cfg.min_replicas, cfg.max_replicas);
    if (first != load.target_replicas) return 1;
    if (load.running_replicas == 0 || st.decision_counter == 0) return 0;  // cold path or "no change"
    std::int64_t k = 0;
    if (st.decision_counter > 0) k = loops(cfg.upscale_delay_s) - st.decision_counter + 2;
    else k = st.decision_counter + loops(down_delay(cfg, load)) + 2;
    return k <= limit ? k : 0;
  }
  void repeat(const ReplicaAutoscalingConfig& cfg, const ReplicaLoad& load, ReplicaAutoscalingState& st,
              std::int64_t n) const override {
    if (n <= 0) return;
    decide(cfg, load, st);
    if (load.running_replicas == 0) return;  // the cold path leaves the counter
    if (st.decision_counter > 0) st.decision_counter += static_cast<int>(n - 1);
    else if (st.decision_counter < 0) st.decision_counter -= static_cast<int>(n - 1);
  }

 private:
  static double down_delay(const ReplicaAutoscalingConfig& cfg, const ReplicaLoad& load) {
    int desired = ray_desired_replicas(cfg, load.total_ongoing_requests, load.running_replicas);
    if (desired == 0 && load.target_replicas > 1) desired = 1;
    return load.target_replicas == 1 && desired == 0 ? cfg.downscale_to_zero_delay_s.value_or(cfg.downscale_delay_s)
                                                     : cfg.downscale_delay_s;
  }
  // int(delay_s / CONTROL_LOOP_INTERVAL_S), truncated as Ray's int() does
  // (so 0.3 s is 2 loops: 0.3 / 0.1 is 2.9999999999999996).
  static int loops(double delay_s) { return static_cast<int>(delay_s / kControlLoopIntervalS); }
};

}  // namespace

void register_replica_autoscaling_policies(PolicyRegistry& r) {
  r.add<ReplicaAutoscalingPolicy, RayReplicaAutoscaling>("ray");
}

}  // namespace vramsim
