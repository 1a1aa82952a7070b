#include "control/replica_autoscaler.hpp"

#include <algorithm>
#include <cmath>

#include "models/registry.hpp"

namespace vramsim {

namespace {
const Duration kLoop = seconds(kControlLoopIntervalS);
// At most this many loops are looked ahead (11.6 days).
constexpr std::int64_t kMaxLookAhead = 10000000;
}  // namespace

void ReplicaAutoscaler::deployed(const AppSpec& spec) {
  if (!spec.serve || !spec.serve->autoscaling) {
    watched_.erase(spec.id);
    return;
  }
  const SimTime now = ctx_.exec.now();
  if (watched_.empty() && !timer_) last_tick_ = now;  // the loop's grid starts here
  catch_up();
  Watched w;
  w.cfg = *spec.serve->autoscaling;
  const RayServeSettings& ray = ctx_.cfg.ray_serve;
  w.cfg.version = ray.version;
  w.policy = PolicyRegistry::instance().make<ReplicaAutoscalingPolicy>(w.cfg.policy);
  w.target = spec.replicas;
  w.record = std::max<Duration>(1, seconds(ray.record_interval(w.cfg.look_back_period_s, w.cfg.metrics_interval_s)));
  w.samples.assign(ray.samples_per_window(w.cfg.look_back_period_s, w.cfg.metrics_interval_s), 0);
  w.next_record = next_grid(now);
  w.next_push = now + seconds(w.cfg.metrics_interval_s);
  watched_[spec.id] = std::move(w);
  schedule(next_grid(now));
}

// The samples that fall due up to `upto`: the load `before` until `now`,
// the one read now at `now`. Of more than a window's worth only the last
// window's stay in it: the earlier ones are counted as passed, not taken.
void ReplicaAutoscaler::take_samples(Watched& w, SimTime upto, SimTime now, double before) {
  if (w.next_record > upto) return;
  const std::size_t window = w.samples.size();
  const auto due = static_cast<std::size_t>((upto - w.next_record) / w.record) + 1;
  if (due > window) {
    const std::size_t skip = due - window;
    const int value = static_cast<int>(before);  // all before `now`: a window's worth is still to come
    w.next_sample = (w.next_sample + skip) % window;
    w.filled = std::min(w.filled + skip, window);
    w.same_run = value == w.last_sample ? std::min(w.same_run + skip, window) : std::min(skip, window);
    w.last_sample = value;
    w.next_record += static_cast<SimTime>(skip) * w.record;
  }
  for (; w.next_record <= upto; w.next_record += w.record) {
    const int sample = static_cast<int>(w.next_record < now ? before : w.now_load);
    w.sum += sample - w.samples[w.next_sample];
    w.samples[w.next_sample] = sample;
    w.next_sample = (w.next_sample + 1) % window;
    w.filled = std::min(w.filled + 1, window);
    w.same_run = sample == w.last_sample ? std::min(w.same_run + 1, window) : 1;
    w.last_sample = sample;
  }
}

// Whether no push can change what was last pushed while the load stays:
// every sample in the window is the load now, and so was the last push.
bool ReplicaAutoscaler::steady(const Watched& w) {
  if (w.filled == 0) return w.now_load == 0 && w.reported == 0;
  return w.same_run >= w.filled && w.last_sample == w.now_load && w.reported == w.now_load;
}

bool ReplicaAutoscaler::active(const AppRecord* app) {
  if (!app || !app->admitted.value_or(false)) return false;
  const AppState st = app->life.state();
  return st == AppState::Running || st == AppState::Deploying || st == AppState::Unhealthy;
}

SimTime ReplicaAutoscaler::next_grid(SimTime t) const {
  // The first loop at or after t.
  if (t <= last_tick_) return last_tick_ + kLoop;
  return last_tick_ + (t - last_tick_ + kLoop - 1) / kLoop * kLoop;
}

void ReplicaAutoscaler::schedule(SimTime t) {
  if (timer_ && scheduled_at_ <= t) return;
  if (timer_) ctx_.exec.cancel(timer_);
  scheduled_at_ = t;
  timer_ = ctx_.exec.at(t, [this] {
    timer_ = 0;
    tick();
  });
}

// A push (_get_metrics_report, router.py:443-498@5866967): the mean of the
// window's samples (the load now where there is none yet), and for the
// controller's aggregation the samples themselves.
void ReplicaAutoscaler::push(Watched& w) const {
  w.reported = w.filled > 0 ? static_cast<double>(w.sum) / static_cast<double>(w.filled) : w.now_load;
  if (!ctx_.cfg.ray_serve.aggregate_at_controller) return;
  w.pushed.clear();
  const std::size_t window = w.samples.size();
  for (std::size_t j = 0; j < w.filled; ++j) {
    const std::size_t age = w.filled - j;  // the newest sample is at next_record - record
    w.pushed.emplace_back(w.next_record - static_cast<SimTime>(age) * w.record,
                          w.samples[(w.next_sample + window - age) % window]);
  }
}

bool ReplicaAutoscaler::every_loop() const {
  return ctx_.cfg.replica_autoscaler_every_loop || ctx_.cfg.ray_serve.aggregate_at_controller;
}

ReplicaLoad ReplicaAutoscaler::load_of(const std::string& id, const Watched& w, SimTime now) const {
  const int running = router_.running_replicas(id);
  // The last push's mean (_calculate_total_requests_simple_mode,
  // autoscaling_state.py:636-703), or in the aggregate mode its samples: the
  // handle's queued series, beside one running series per replica it sent
  // requests to while any runs.
  const double total = ctx_.cfg.ray_serve.aggregate_at_controller
                           ? aggregate_handle_samples(w.pushed, running > 0, now, w.cfg.aggregation_function)
                           : w.reported;
  return ReplicaLoad{w.target, running, total};
}

int ReplicaAutoscaler::decide(Watched& w, const ReplicaLoad& load) const {
  // apply_bounds: the policy's target within [min_replicas, max_replicas].
  return std::clamp(w.policy->decide(w.cfg, load, w.state), w.cfg.min_replicas, w.cfg.max_replicas);
}

// The loops skipped since the last one run: nothing a decision reads
// changed meanwhile (a change calls wake() first, and no sample or push
// fell due), so each is the same pure decision, and none changed a target
// (that loop would have been run).
void ReplicaAutoscaler::replay(SimTime until) {
  const std::int64_t loops = (until - last_tick_) / kLoop - 1;
  if (loops <= 0) return;
  for (auto& [id, w] : watched_)
    if (active(apps_.app(id))) w.policy->repeat(w.cfg, load_of(id, w, last_tick_), w.state, loops);
  last_tick_ += loops * kLoop;
}

void ReplicaAutoscaler::catch_up() {
  if (watched_.empty()) return;
  const SimTime now = ctx_.exec.now();
  // Loops strictly before now, as if they had run.
  if (now > last_tick_ + kLoop) replay(last_tick_ + (now - last_tick_ - 1) / kLoop * kLoop + kLoop);
}

void ReplicaAutoscaler::wake() {
  if (watched_.empty() || ctx_.exited || ctx_.shutting_down) return;
  catch_up();
  schedule(next_grid(ctx_.exec.now()));
}

void ReplicaAutoscaler::tick() {
  if (ctx_.exited || ctx_.shutting_down) return;
  const SimTime now = ctx_.exec.now();
  replay(now);
  last_tick_ = now;
  SimTime next = now + kMaxLookAhead * kLoop;
  for (auto& [id, w] : watched_) {
    if (!active(apps_.app(id))) continue;
    // The handle's look-back window: a sample every record interval, its
    // mean pushed every metrics_interval_s. The load changes only where a
    // loop runs (a change wakes the loop first; a queued request's timeout
    // is a loop of its own, below), so every sample since the last loop run
    // is the load read then, and the samples and pushes since are taken
    // here in their order, without a loop each.
    const double before = w.now_load;
    w.now_load = router_.ongoing_requests(id);
    if (w.next_push <= now) {
      const Duration every = seconds(w.cfg.metrics_interval_s);
      const SimTime last_push = w.next_push + (now - w.next_push) / every * every;
      take_samples(w, last_push, now, before);
      push(w);
      w.next_push = last_push + every;
    }
    take_samples(w, now, now, before);
    // A request arrived with no replica running: the handle pushes at once
    // (wrap_queued_request, router.py:226-245, 375-380@5866967).
    if (w.now_load > before && router_.running_replicas(id) == 0) push(w);
    ReplicaLoad load = load_of(id, w, now);
    const int target = decide(w, load);
    if (target != w.target) {
      ctx_.trace.record(now, TraceKind::replica_target,
                        {{"app", id}, {"from", w.target}, {"to", target}, {"running", load.running_replicas},
                         {"ongoing_requests", load.total_ongoing_requests}});
      const std::string reason =
          load.running_replicas == 0 ? "cold start" : target > w.target ? "upscale" : "downscale";
      w.target = target;
      apps_.scale_replicas(id, target, reason);
      load = load_of(id, w, now);
    }
    // The next loop that must run: a push falling due (but where no push
    // can change what was pushed), a queued request timing out, or the
    // first loop whose decision changes the target.
    SimTime due = steady(w) ? next : w.next_push;
    if (const auto expiry = router_.next_queue_expiry(id)) due = std::min(due, std::max(*expiry, now + 1));
    const std::int64_t limit = every_loop() ? 0 : std::max<std::int64_t>(1, (std::min(due, next) - now) / kLoop);
    if (const std::int64_t k = w.policy->loops_until_change(w.cfg, load, w.state, limit); k > 0)
      due = std::min(due, now + k * kLoop);
    next = std::min(next, next_grid(due));
  }
  schedule(every_loop() ? now + kLoop : next);
}

}  // namespace vramsim
