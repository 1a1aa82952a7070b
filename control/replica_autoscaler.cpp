#include "control/replica_autoscaler.hpp"

#include <algorithm>
#include <cmath>

#include "models/registry.hpp"

namespace vramsim {

void ReplicaAutoscaler::deployed(const AppSpec& spec) {
  if (!spec.serve || !spec.serve->autoscaling) {
    watched_.erase(spec.id);
    return;
  }
  Watched w;
  w.cfg = *spec.serve->autoscaling;
  w.policy = PolicyRegistry::instance().make<ReplicaAutoscalingPolicy>(w.cfg.policy);
  w.target = spec.replicas;
  const auto window =
      static_cast<std::size_t>(std::max(1.0, std::round(w.cfg.look_back_period_s / kMetricRecordIntervalS)));
  w.samples.assign(window, 0);
  w.next_push = ctx_.exec.now() + seconds(w.cfg.metrics_interval_s);
  watched_[spec.id] = std::move(w);
  if (!loop_.active())
    loop_ = ctx_.exec.every(seconds(kControlLoopIntervalS), [this] { tick(); });
}

void ReplicaAutoscaler::tick() {
  if (ctx_.exited || ctx_.shutting_down) {
    loop_.cancel();
    return;
  }
  const SimTime now = ctx_.exec.now();
  for (auto& [id, w] : watched_) {
    const AppRecord* app = apps_.app(id);
    if (!app || !app->admitted.value_or(false)) continue;
    const AppState st = app->life.state();
    if (st != AppState::Running && st != AppState::Deploying && st != AppState::Unhealthy) continue;
    const double now_load = router_.ongoing_requests(id);
    // The handle's look-back window: a sample every record interval, its
    // mean pushed every metrics_interval_s.
    if (now >= w.next_record) {
      const int sample = static_cast<int>(now_load);
      w.sum += sample - w.samples[w.next_sample];
      w.samples[w.next_sample] = sample;
      w.next_sample = (w.next_sample + 1) % w.samples.size();
      w.filled = std::min(w.filled + 1, w.samples.size());
      w.next_record = now + seconds(kMetricRecordIntervalS);
    }
    if (now >= w.next_push && w.filled > 0) {
      w.reported = static_cast<double>(w.sum) / static_cast<double>(w.filled);
      while (w.next_push <= now) w.next_push += seconds(w.cfg.metrics_interval_s);
    }
    const int running = router_.running_replicas(id);
    ReplicaLoad load{w.target, running, running == 0 ? now_load : w.reported};
    // apply_bounds: the policy's target within [min_replicas, max_replicas].
    const int next = std::clamp(w.policy->decide(w.cfg, load, w.state), w.cfg.min_replicas, w.cfg.max_replicas);
    if (next == w.target) continue;
    ctx_.trace.record(now, "replica_target",
                      {{"app", id}, {"from", w.target}, {"to", next}, {"running", running},
                       {"ongoing_requests", load.total_ongoing_requests}});
    const std::string reason = running == 0 ? "cold start" : next > w.target ? "upscale" : "downscale";
    w.target = next;
    apps_.scale_replicas(id, next, reason);
  }
}

}  // namespace vramsim
