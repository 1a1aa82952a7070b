#include "control/shutdown.hpp"

#include <memory>
#include <string>
#include <vector>

namespace vramsim {

void Shutdown::run(std::function<void()> done, std::optional<Duration> blocking_timeout) {
  if (ctx_.exited || ctx_.shutting_down) return;
  ctx_.shutting_down = true;
  Json started = Json::object();
  if (blocking_timeout) started["blocking_timeout_us"] = *blocking_timeout;
  ctx_.trace.record(ctx_.exec.now(), TraceKind::shutdown_started, std::move(started));
  if (blocking_timeout) {
    const Duration limit = *blocking_timeout;
    force_exit_ = ctx_.exec.after(limit, [this, done, limit] {
      force_exit_ = 0;
      if (ctx_.exited) return;
      ctx_.trace.record(ctx_.exec.now(), TraceKind::shutdown_force_exit, {{"after_us", limit}});
      exit(done);
    });
  }
  // No scale-up while draining.
  monitor_.stop_loop();
  apps_.undeploy_all();
  monitor_.cancel_creation();
  carry_out(plan(), [this, done] { finish(done); });
}

ShutdownPlan Shutdown::plan() const {
  ShutdownSnapshot snap;
  // close_all reads `ray_cluster.status["nodes"]`: the last monitor pass's
  // snapshot, which misses a node that joined since and still lists one
  // that Ray lost since (its stop task then cannot run there: it times out).
  ctx_.cluster.for_each_node([&](const Node& n) {
    if (!n.spec.head && monitor_.listed_in_status(n.id)) snap.registered.push_back({n.id, n.spec.slurm_job_id});
  });
  for (const auto& j : ctx_.backend.list_jobs()) snap.jobs.push_back(j.id);
  const ShutdownPlan plan = ctx_.policies.shutdown->plan(snap);
  ctx_.trace.record(ctx_.exec.now(), TraceKind::shutdown_plan,
                    {{"return_early", plan.return_early}, {"drain", plan.drain.size()},
                     {"await_drain", plan.await_drain}, {"cancel_remaining", plan.cancel_remaining},
                     {"jobs_listed", snap.jobs.size()}, {"note", plan.note}});
  return plan;
}

void Shutdown::carry_out(const ShutdownPlan& plan, std::function<void()> finish) {
  auto sweep = [this, plan, finish] {
    if (!plan.cancel_remaining) { finish(); return; }
    std::vector<std::string> ids;
    for (const auto& j : ctx_.backend.list_jobs()) ids.push_back(j.id);
    if (ids.empty()) { finish(); return; }
    monitor_.cancel_and_wait(ids, [finish](std::vector<std::string>) { finish(); });
  };
  if (plan.return_early) { finish(); return; }
  if (plan.drain.empty() || !plan.await_drain) {
    for (const auto& w : plan.drain) monitor_.close_worker(w.node_id, w.job_id, {});
    sweep();
    return;
  }
  auto remaining = std::make_shared<std::size_t>(plan.drain.size());
  for (const auto& w : plan.drain)
    monitor_.close_worker(w.node_id, w.job_id, [remaining, sweep] {
      if (--*remaining == 0) sweep();
    });
}

void Shutdown::finish(const std::function<void()>& done) {
  if (ctx_.exited) return;  // a blocking stop's limit came first
  // close_all has returned; RayCluster.stop goes on (serve.shutdown,
  // ray.shutdown, the head's `ray stop`), then the worker's own exit, and the
  // event loop turns meanwhile: a cancelled creation task's handler runs
  // only if that lasts. With every step 0 the process exits as close_all
  // returns.
  const ControlConfig& c = ctx_.cfg;
  const Duration serve = c.serve_shutdown.sample(ctx_.rng.stream("shutdown.serve_shutdown"));
  const Duration ray = c.ray_shutdown.sample(ctx_.rng.stream("shutdown.ray_shutdown"));
  const Duration head_stop = c.head_ray_stop.sample(ctx_.rng.stream("shutdown.head_ray_stop"));
  const Duration head_exit = c.head_exit.sample(ctx_.rng.stream("shutdown.head_exit"));
  const Duration d = serve + ray + head_stop + head_exit;
  if (d == 0) {
    exit(done);
    return;
  }
  ctx_.trace.record(ctx_.exec.now(), TraceKind::close_all_returned,
                    {{"serve_shutdown_us", serve}, {"ray_shutdown_us", ray}, {"head_ray_stop_us", head_stop},
                     {"head_exit_us", head_exit}});
  ctx_.exec.after(d, [this, done] {
    if (!ctx_.exited) exit(done);
  });
}

void Shutdown::exit(const std::function<void()>& done) {
  ctx_.exited = true;
  if (force_exit_) ctx_.exec.cancel(force_exit_);
  force_exit_ = 0;
  monitor_.stop_sampler();
  ctx_.shutdown_done_at = ctx_.exec.now();
  Json left = Json::array();
  for (const auto& j : monitor_.jobs_not_cancelled()) left.push_back(j);
  ctx_.trace.record(ctx_.exec.now(), TraceKind::shutdown_done, {{"jobs_left", left}});
  if (done) done();
}

}  // namespace vramsim
