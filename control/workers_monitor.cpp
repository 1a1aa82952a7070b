#include "control/workers_monitor.hpp"

#include <algorithm>
#include <memory>

namespace vramsim {

WorkersMonitor::WorkersMonitor(ControlContext& ctx, ReplicaMemory& memory)
    : ctx_(ctx), exec_(ctx.exec), backend_(ctx.backend), cluster_(ctx.cluster), trace_(ctx.trace), cfg_(ctx.cfg),
      memory_(memory), history_(ctx.cfg.status_history) {}

void WorkersMonitor::start() {
  // RayCluster.start runs a first monitor_cluster before it reports ready
  // (ray_cluster.py:1233@fba5ffe). The worker's loop then polls every
  // `monitor_poll` with its last pass at the epoch (worker.py:277@fba5ffe,
  // `_last_monitoring = 0`), so its first poll starts a pass; the rest of
  // the worker's start-up between the two is taken as 0. The loop runs in
  // every mode (worker.py:840-902): without SLURM a pass takes the status
  // and checks the apps, and scales nothing.
  pass(false);
  schedule_tick(cfg_.monitor_poll);
  sampler_ = exec_.every(cfg_.memory_sample_period, [this] { memory_.sample(); }, 0);
}

void WorkersMonitor::stop_loop() {
  if (monitor_timer_) exec_.cancel(monitor_timer_);
  monitor_timer_ = 0;
}

void WorkersMonitor::stop_sampler() { sampler_.cancel(); }

// ---------------------------------------------------------- nodes from backend

bool WorkersMonitor::register_node(NodeSpec spec) {
  if (ctx_.exited) {
    // The head is gone; the job keeps its allocation until its time limit.
    trace_.record(exec_.now(), TraceKind::node_unclaimed, {{"job", spec.slurm_job_id}, {"ip", spec.ip}});
    return false;
  }
  Json devices = Json::array();
  for (const auto& d : spec.devices) devices.push_back({{"model", d.model}, {"total_vram_mb", d.total_vram_mb}});
  const std::string job = spec.slurm_job_id, ip = spec.ip;
  const Json resources = spec.resources.to_json();
  NodeId id = cluster_.add_node(std::move(spec), exec_.now());
  trace_.record(exec_.now(), TraceKind::node_registered,
                {{"node", id}, {"job", job}, {"ip", ip}, {"resources", resources}, {"devices", devices}});
  return true;
}

std::optional<WorkersMonitor::LostNode> WorkersMonitor::remove_node(const std::string& job_id,
                                                                    const std::string& reason) {
  const Node* n = cluster_.node_for_job(job_id);
  if (!n) return std::nullopt;
  LostNode lost{n->id, {}};
  lost.demands = cluster_.remove_node(lost.node);
  trace_.record(exec_.now(), TraceKind::node_lost, {{"node", lost.node}, {"job", job_id}, {"reason", reason}});
  return lost;
}

// ---------------------------------------------------------------- the loop

int WorkersMonitor::worker_jobs() const {
  return static_cast<int>(backend_.job_count()) - static_cast<int>(deletions_.size());
}

void WorkersMonitor::sample_status() {
  // Only nodes whose usage changed since the last tick are read again.
  history_.begin_sample(exec_.now());
  for (const Node* n : cluster_.take_usage_changes()) {
    if (n->spec.head) continue;  // the admission scan and close_all look at workers only
    if (!n->alive()) {
      history_.remove(n->id);
      status_nodes_.erase(n->id);
      continue;
    }
    auto [listed, fresh] = status_nodes_.try_emplace(n->id);
    if (fresh) listed->second.total = n->total();  // a node's totals never change
    listed->second.available = n->available;
    WorkerUsage w;
    w.node_id = n->id;
    w.job_id = n->spec.slurm_job_id;
    w.total_cpu = n->total().get(kCPU);
    w.used_cpu = w.total_cpu - n->available.get(kCPU);
    w.total_gpu = n->total().get(kGPU);
    w.used_gpu = w.total_gpu - n->available.get(kGPU);
    history_.update(w);
  }
}

void WorkersMonitor::schedule_tick(Duration delay) {
  monitor_timer_ = exec_.after(delay, [this] {
    monitor_timer_ = 0;
    if (ctx_.exited || ctx_.shutting_down) return;
    pass(true);
    schedule_tick(next_pass_after(cfg_.monitor_work.sample(ctx_.rng.stream("monitor.work")),
                                  consecutive_errors_ > 0 ? error_backoff(consecutive_errors_) : 0, cfg_.monitor_tick,
                                  cfg_.monitor_poll));
  });
}

Duration WorkersMonitor::next_pass_after(Duration work, Duration backoff, Duration tick, Duration poll) {
  // worker.py:845-858@fba5ffe: after the pass's work (and a raising pass's
  // backoff sleep, :956), the loop sleeps `poll` and checks whether `tick`
  // has passed since the pass started, polling on until it has. So a pass
  // of 5 ms starts the next 10.005 s after its own start, and after a
  // backoff of 16, 32 or 60 s the next comes 17, 33 or 61 s + the work on.
  const Duration slept = work + backoff;
  if (poll <= 0) return std::max(slept, tick);
  Duration polls = poll;
  if (slept + polls < tick) polls = (tick - slept + poll - 1) / poll * poll;
  return slept + polls;
}

void WorkersMonitor::pass(bool from_worker_loop) {
  if (ctx_.exited) return;
  sample_status();  // monitor_cluster: the pass's cluster status
  if (after_status_sample) after_status_sample();
  // monitor_cluster calls check_scaling only with SLURM workers.
  if (cfg_.slurm_mode) check_scaling();
  if (from_worker_loop && after_pass) after_pass();
}

void WorkersMonitor::check_scaling() {
  AutoscalerSnapshot s;
  s.now = exec_.now();
  s.actors = ctx_.policies.pending->actors(cluster_.pending_queue(DemandKind::Actor), cluster_.in_creation());
  s.tasks = RequestList::view(cluster_.pending_queue(DemandKind::Task));
  s.jobs = RequestList::view(cluster_.pending_queue(DemandKind::Job));
  s.creation_in_flight = creation_job_.has_value() || creation_submitting_;
  s.last_scale_up = last_scale_up_;
  s.last_scale_down_check = last_scale_down_check_;
  s.worker_jobs = worker_jobs();
  s.history = &history_;

  const ScaleDecision d = ctx_.policies.autoscaler->decide(s, cfg_.autoscaler);
  if (d.scale_down_checked) last_scale_down_check_ = s.now;
  if (d.action != ScaleDecision::Action::Error) consecutive_errors_ = 0;
  switch (d.action) {
    case ScaleDecision::Action::None: break;
    case ScaleDecision::Action::Error:
      ++consecutive_errors_;
      trace_.record(s.now, TraceKind::autoscaler_error,
                    {{"error", d.note}, {"demand", d.demand.to_json()}, {"consecutive", consecutive_errors_},
                     {"backoff_us", error_backoff(consecutive_errors_)}});
      break;
    case ScaleDecision::Action::ScaleUp:
      scale_up(d, s.now, s.worker_jobs, installing_only(s));
      break;
    case ScaleDecision::Action::ScaleDown:
      for (const auto& w : d.remove) {
        if (deletions_.count(w.node_id)) continue;
        // The clock's now, not the snapshot's: live, the stops before this
        // one took wall time, and a trace never goes back.
        trace_.record(exec_.now(), TraceKind::scale_down,
                      {{"node", w.node_id}, {"job", w.job_id}, {"idle_for_us", d.idle_for}});
        close_worker(w.node_id, w.job_id, {});
      }
      break;
  }
}

// ---------------------------------------------------------------- scale up

Json WorkersMonitor::installing_only(const AutoscalerSnapshot& s) const {
  const auto& in_creation = cluster_.in_creation();
  if (in_creation.empty() || s.actors.size() == RequestList::view(cluster_.pending_queue(DemandKind::Actor)).size())
    return Json();
  AutoscalerSnapshot waiting = s;
  waiting.actors = RequestList::view(cluster_.pending_queue(DemandKind::Actor));
  if (has_pending_demand(waiting)) return Json();
  Json labels = Json::array();
  for (const auto& [id, d] : in_creation) labels.push_back(d->label);
  return labels;
}

void WorkersMonitor::scale_up(const ScaleDecision& d, SimTime now, int worker_jobs, const Json& installing) {
  last_scale_up_ = now;
  Json ev = {{"gpus", d.job.gpus}, {"cpus", d.job.cpus}, {"mem_per_cpu_gb", d.job.mem_per_cpu_gb},
             {"demand", d.demand.to_json()}, {"worker_jobs", worker_jobs}};
  if (!installing.is_null()) ev["for_installing"] = installing;
  trace_.record(now, TraceKind::scale_up, std::move(ev));
  // The creation is in flight from here until sbatch answers and then
  // until the job's node registers or the job disappears.
  creation_submitting_ = true;
  backend_.submit_worker(d.job, [this](std::optional<std::string> job, const std::string& error) {
    creation_submitting_ = false;
    if (!job) {
      trace_.record(exec_.now(), TraceKind::worker_creation_failed, {{"error", error}});
      return;
    }
    if (ctx_.exited || ctx_.shutting_down) {
      // sbatch answered after shutdown cancelled the creation task; the
      // job is the sweep's (fixed) or is left behind (legacy), as for any
      // job the creation task had submitted.
      return;
    }
    creation_job_ = *job;
    const std::string id = *job;
    exec_.after(cfg_.creation_poll, [this, id] { poll_creation(id); });
  });
}

void WorkersMonitor::poll_creation(const std::string& job_id) {
  if (ctx_.exited || creation_job_ != job_id) return;  // cancelled by shutdown
  if (backend_.still_listed({job_id}).empty()) {
    trace_.record(exec_.now(), TraceKind::worker_creation_failed,
                  {{"job", job_id}, {"error", "Job " + job_id + " is no longer running"}});
    creation_job_.reset();
    return;
  }
  if (const Node* n = cluster_.node_for_job(job_id)) {
    trace_.record(exec_.now(), TraceKind::worker_joined, {{"job", job_id}, {"node", n->id}});
    creation_job_.reset();
    return;
  }
  exec_.after(cfg_.creation_poll, [this, job_id] { poll_creation(job_id); });
}

void WorkersMonitor::cancel_creation() {
  if (creation_submitting_) {
    // sbatch has not answered: the task has no job id, and the job sbatch
    // then creates is the sweep's (fixed) or is left behind (legacy).
    trace_.record(exec_.now(), TraceKind::worker_creation_cancelled, {{"job", nullptr}, {"sbatch_in_flight", true}});
    return;
  }
  if (!creation_job_) return;
  const std::string job = *creation_job_;
  creation_job_.reset();
  trace_.record(exec_.now(), TraceKind::worker_creation_cancelled, {{"job", job}});
  // _add_worker (slurm_workers.py:622-625@ad84209): `except CancelledError:
  // await self._cancel_jobs([submitted_job_id])`. It runs once control
  // returns to the event loop; legacy close_all returns before that without
  // awaiting it, so the handler races the rest of the shutdown.
  exec_.after(0, [this, job] {
    if (ctx_.exited) {
      trace_.record(exec_.now(), TraceKind::creation_cancel_lost,
                    {{"job", job}, {"reason", "the process exited before the creation task's handler ran"}});
      return;
    }
    if (cancel_requested_.count(job) || backend_.still_listed({job}).empty()) return;
    cancel_requested_.insert(job);
    trace_.record(exec_.now(), TraceKind::jobs_cancelled, {{"jobs", Json::array({job})}, {"by", "worker creation task"}});
    backend_.cancel_jobs({job});
  });
}

std::vector<std::string> WorkersMonitor::jobs_not_cancelled() const {
  std::vector<std::string> left;
  for (const auto& j : backend_.list_jobs())
    if (!cancel_requested_.count(j.id)) left.push_back(j.id);
  return left;
}

// -------------------------------------------------------------- scale down

void WorkersMonitor::close_worker(const std::string& node_id, const std::string& job_id,
                                  std::function<void()> done) {
  deletions_[node_id] = job_id;
  trace_.record(exec_.now(), TraceKind::graceful_stop_started, {{"node", node_id}, {"job", job_id}});
  const Node* n = cluster_.node(node_id);
  if (!n || !n->alive()) {
    // The stop task cannot be scheduled on a node that is gone: it times out.
    exec_.after(cfg_.grace_period, [this, node_id, job_id, done] {
      if (ctx_.exited) return;
      deletions_.erase(node_id);
      trace_.record(exec_.now(), TraceKind::graceful_stop_failed,
                    {{"node", node_id}, {"job", job_id}, {"error", "stop command timed out"}});
      if (done) done();
    });
    return;
  }
  backend_.stop_node(job_id);
  wait_node_gone(node_id, job_id, exec_.now() + cfg_.grace_period, std::move(done));
}

void WorkersMonitor::wait_node_gone(const std::string& node_id, const std::string& job_id, SimTime deadline,
                                    std::function<void()> done) {
  exec_.after(cfg_.stop_poll, [this, node_id, job_id, deadline, done] {
    if (ctx_.exited) return;  // the process is gone, and the task with it
    if (listed_in_status(node_id) && exec_.now() < deadline) {
      wait_node_gone(node_id, job_id, deadline, done);
      return;
    }
    cancel_and_wait({job_id}, [this, node_id, job_id, done](std::vector<std::string> cancelled) {
      deletions_.erase(node_id);
      trace_.record(exec_.now(), TraceKind::graceful_stop_done,
                    {{"node", node_id}, {"job", job_id}, {"cancelled", !cancelled.empty()}});
      if (done) done();
    });
  });
}

Duration WorkersMonitor::error_backoff(int consecutive) {
  Duration b = 2 * kSecond;
  for (int i = 1; i < consecutive && b < 60 * kSecond; ++i) b *= 2;
  return std::min(b, 60 * kSecond);
}

bool WorkersMonitor::listed_in_status(const std::string& node_id) const { return status_nodes_.count(node_id) > 0; }

void WorkersMonitor::cancel_and_wait(std::vector<std::string> jobs,
                                     std::function<void(std::vector<std::string>)> done) {
  // Only the jobs of this wait are asked about, once per poll: its cost does
  // not grow with the number of jobs in the queue.
  std::vector<std::string> listed = backend_.still_listed(jobs);
  if (listed.empty()) {
    done({});
    return;
  }
  Json ids = Json::array();
  for (const auto& j : listed) {
    ids.push_back(j);
    cancel_requested_.insert(j);
  }
  trace_.record(exec_.now(), TraceKind::jobs_cancelled, {{"jobs", ids}});
  backend_.cancel_jobs(listed);
  const SimTime deadline = exec_.now() + cfg_.grace_period;
  // The poll holds itself only weakly; each scheduled step holds it strongly,
  // so a run that ends mid-poll frees it with the queue.
  auto poll = std::make_shared<std::function<void()>>();
  std::weak_ptr<std::function<void()>> weak = poll;
  auto waiting = std::make_shared<std::vector<std::string>>(listed);  // still listed at the last poll
  *poll = [this, listed = std::move(listed), waiting, deadline, done, weak] {
    if (ctx_.exited) return;  // the process is gone, and the wait with it
    *waiting = backend_.still_listed(*waiting);
    if (waiting->empty() || exec_.now() >= deadline) {
      std::vector<std::string> cancelled;
      // Both lists are in listing order, so one merge finds the jobs gone.
      auto left = waiting->begin();
      for (const auto& j : listed) {
        if (left != waiting->end() && *left == j) { ++left; continue; }
        cancelled.push_back(j);
      }
      done(cancelled);
      return;
    }
    if (auto self = weak.lock()) exec_.after(cfg_.cancel_poll, [self] { (*self)(); });
  };
  exec_.after(cfg_.cancel_poll, [poll] { (*poll)(); });
}

}  // namespace vramsim
