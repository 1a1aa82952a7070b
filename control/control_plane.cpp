#include "control/control_plane.hpp"

#include <algorithm>

namespace vramsim {

ControlPlane::ControlPlane(Executor& exec, ClusterBackend& backend, ClusterState& cluster,
                           TraceRecorder& trace, RandomStreams& rng, PolicySet policies, ControlConfig cfg)
    : exec_(exec), backend_(backend), cluster_(cluster), trace_(trace), rng_(rng),
      policies_(std::move(policies)), cfg_(std::move(cfg)) {
  backend_.set_listener(this);
  history_ = IdleHistory(cfg_.status_history);
}

void ControlPlane::start() {
  if (cfg_.slurm_mode) schedule_tick(cfg_.monitor_tick);
  sampler_ = exec_.every(cfg_.memory_sample_period, [this] { sample_memory(); }, 0);
}

const AppRecord* ControlPlane::app(const std::string& id) const {
  auto it = apps_.find(id);
  return it == apps_.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------- apps manager

void ControlPlane::deploy(const AppSpec& spec) {
  if (exited_ || shutting_down_) {
    trace_.record(exec_.now(), "deploy_ignored",
                  {{"app", spec.id}, {"reason", exited_ ? "worker shut down" : "shutdown in progress"}});
    return;
  }
  auto [it, fresh] = apps_.try_emplace(spec.id);
  AppRecord& app = it->second;
  if (!fresh) {
    // A redeploy replaces the replicas once admitted; drop the old ones now.
    withdraw_replicas(app);
    app.replicas.clear();
    app.running_at.reset();
  }
  app.spec = spec;
  app.deploy_cancelled = false;
  app.requested_at = exec_.now();
  app.admitted.reset();
  app.message.clear();
  trace_.record(exec_.now(), "deploy_requested",
                {{"app", spec.id}, {"gpu_memory_mb", spec.gpu_memory_mb ? Json(*spec.gpu_memory_mb) : Json()},
                 {"replicas", spec.replicas}, {"cpus", spec.cpus}});
  deploy_queue_.push_back(spec.id);
  next_deploy();
}

void ControlPlane::next_deploy() {
  if (deploy_lock_ || deploy_queue_.empty() || exited_ || shutting_down_) return;
  deploy_lock_ = true;  // deploys are serialised, as under the real lock
  const std::string id = deploy_queue_.front();
  deploy_queue_.pop_front();
  // The introspection task goes out before the resource check: its pending
  // demand is what lets a cold cluster scale up before admission runs.
  DemandId task = cluster_.submit(DemandKind::Task, id, "introspection " + id, cfg_.introspection_request,
                                  exec_.now());
  introspection_of_[task] = id;
  trace_.record(exec_.now(), "introspection_submitted",
                {{"app", id}, {"resources", cfg_.introspection_request.to_json()}});
  // The resource check does not wait for the task to be placed: on a cold
  // cluster it runs while the worker job the task triggered is in flight.
  deploy_checking_ = id;
  deploy_check_timer_ = exec_.after(cfg_.introspection_check_after, [this, id] { check_deploy(id); });
  place_pending();
}

void ControlPlane::introspection_placed(const std::string& id, DemandId task) {
  // The task runs only once it has a node; it holds its CPU until done.
  exec_.after(cfg_.introspection_duration, [this, id, task] {
    if (!introspection_of_.erase(task)) return;  // withdrawn by shutdown meanwhile
    cluster_.withdraw(task);
    trace_.record(exec_.now(), "introspection_done", {{"app", id}});
    if (!exited_) place_pending();
  });
}

ClusterGpuView ControlPlane::gpu_view() const {
  if (gpu_view_cache_ && gpu_view_cache_->first == cluster_.membership_version()) return gpu_view_cache_->second;
  ClusterGpuView v;
  v.elastic = cfg_.slurm_mode;
  for (const Node* n : cluster_.alive_nodes()) {
    if (n->total().has(kVramMB)) v.vram_advertised = true;
    for (const auto& d : n->devices())
      if (!v.min_gpu_total_mb || d.total_vram_mb < *v.min_gpu_total_mb) v.min_gpu_total_mb = d.total_vram_mb;
  }
  gpu_view_cache_.emplace(cluster_.membership_version(), v);
  return v;
}

AdmissionSnapshot ControlPlane::admission_snapshot() const {
  AdmissionSnapshot s;
  s.slurm_mode = cfg_.slurm_mode;
  s.max_workers = cfg_.autoscaler.max_workers;
  s.defaults = cfg_.autoscaler.defaults;
  s.nodes = HeadroomList::view(cluster_);
  if (cfg_.slurm_mode) {
    for (const auto& j : backend_.list_jobs()) {
      ++s.worker_jobs;
      if (!cluster_.node_for_job(j.id)) ++s.unregistered_jobs;
    }
  }
  return s;
}

void ControlPlane::check_deploy(const std::string& id) {
  deploy_lock_ = false;
  deploy_check_timer_ = 0;
  deploy_checking_.clear();
  AppRecord& app = apps_.at(id);
  if (app.deploy_cancelled) {
    trace_.record(exec_.now(), "deploy_cancelled", {{"app", id}, {"reason", "stopped before admission"}});
    next_deploy();
    return;
  }
  const auto view = gpu_view();
  app.sizing = policies_.sizing->size({id, app.spec.gpu_memory_mb, app.spec.disable_gpu}, view);
  memory_changed(app);
  trace_.record(exec_.now(), "sizing",
                {{"app", id}, {"branch", app.sizing.branch}, {"num_gpus", app.sizing.num_gpus},
                 {"vram_mb", app.sizing.vram_mb ? Json(*app.sizing.vram_mb) : Json()},
                 {"vram_advertised", view.vram_advertised},
                 {"min_gpu_total_mb", view.min_gpu_total_mb ? Json(*view.min_gpu_total_mb) : Json()},
                 {"warning", app.sizing.warning}, {"error", app.sizing.error}});
  if (!app.sizing.ok()) {
    app.admitted = false;
    app.message = app.sizing.error;
    set_app_state(app, AppState::DeployFailed, app.sizing.error);
    next_deploy();
    return;
  }
  AppDemand demand{id, app.spec.cpus * app.spec.replicas,
                   policies_.sizing->sum_num_gpus({{app.sizing.num_gpus, app.spec.replicas}}),
                   static_cast<double>(app.spec.memory_bytes) * app.spec.replicas};
  const auto snap = admission_snapshot();
  const auto decision = policies_.admission->check(demand, snap);
  app.admitted = decision.admitted;
  app.admission_reason = decision.reason;
  app.message = decision.message;
  trace_.record(exec_.now(), "admission",
                {{"app", id}, {"admitted", decision.admitted}, {"reason", decision.reason},
                 {"requested", {{"cpus", demand.cpus}, {"gpus", demand.gpus}, {"memory", demand.memory}}},
                 {"worker_jobs", snap.worker_jobs}, {"unregistered_jobs", snap.unregistered_jobs},
                 {"max_workers", snap.max_workers}, {"message", decision.message}});
  if (!decision.admitted) {
    set_app_state(app, AppState::DeployFailed, decision.message);
    next_deploy();
    return;
  }
  ResourceSet req{{kCPU, app.spec.cpus}};  // keeps a stated CPU of 0
  if (app.sizing.num_gpus > 0) req.set(kGPU, app.sizing.num_gpus);
  if (app.spec.memory_bytes > 0) req.set(kMemory, static_cast<double>(app.spec.memory_bytes));
  if (app.sizing.vram_mb) req.set(kVramMB, static_cast<double>(*app.sizing.vram_mb));
  app.replica_request = req;
  // A redeploy queued behind another of the same app replaces what that one
  // created after this deploy was requested.
  withdraw_replicas(app);
  app.replicas.clear();
  set_app_state(app, AppState::Deploying, "admitted: " + decision.reason);
  for (int i = 0; i < app.spec.replicas; ++i) {
    ReplicaRecord r;
    r.demand = cluster_.submit(DemandKind::Actor, id, id + "#" + std::to_string(i), req, exec_.now());
    replica_of_[r.demand] = {id, app.replicas.size()};
    app.replicas.push_back(std::move(r));
  }
  trace_.record(exec_.now(), "replicas_submitted",
                {{"app", id}, {"replicas", app.spec.replicas}, {"resources", req.to_json()}});
  place_pending();
  next_deploy();
}

void ControlPlane::set_app_state(AppRecord& app, AppState s, const std::string& reason) {
  if (app.life.state() == s) return;
  const char* from = name(app.life.state());
  app.life.move(s);
  if (s == AppState::Running && !app.running_at) app.running_at = exec_.now();
  trace_.record(exec_.now(), "app_state",
                {{"app", app.spec.id}, {"from", from}, {"to", name(s)}, {"reason", reason}});
}

void ControlPlane::update_app_state(AppRecord& app, const std::string& reason) {
  const auto s = app.life.state();
  if (s != AppState::Deploying && s != AppState::Unhealthy) return;
  const bool all_running = std::all_of(app.replicas.begin(), app.replicas.end(), [](const ReplicaRecord& r) {
    return r.life.state() == ReplicaState::Running;
  });
  if (all_running && !app.replicas.empty()) set_app_state(app, AppState::Running, reason);
}

void ControlPlane::place_pending() {
  for (const Placement& p : cluster_.schedule_pending()) {
    auto it = replica_of_.find(p.demand);
    if (it == replica_of_.end()) {
      const Demand* d = cluster_.demand(p.demand);
      trace_.record(exec_.now(), "task_placed", {{"label", d ? d->label : ""}, {"node", p.node}});
      auto task = introspection_of_.find(p.demand);
      if (task != introspection_of_.end()) introspection_placed(task->second, p.demand);
      continue;
    }
    AppRecord& app = apps_.at(it->second.first);
    replica_placed(app, app.replicas[it->second.second], p);
  }
}

void ControlPlane::replica_placed(AppRecord& app, ReplicaRecord& r, const Placement& p) {
  r.life.move(ReplicaState::Starting);
  r.node = p.node;
  r.device = p.devices.empty() ? -1 : p.devices.front();
  const Node* n = cluster_.node(p.node);
  Json devices = Json::array();
  for (int d : p.devices) devices.push_back(d);
  Json ev = {{"app", app.spec.id}, {"replica", cluster_.demand(p.demand)->label}, {"node", p.node},
             {"job", n->spec.slurm_job_id}, {"devices", devices},
             {"num_gpus", to_double(p.booked.get_amount(kGPU))}, {"vram_mb", p.vram_mb},
             {"node_vram_available_mb", p.node_vram_available_after}};
  if (p.vram_device >= 0) {
    const auto& dev = n->devices()[p.vram_device];
    ev["device_vram_booked_mb"] = p.device_vram_booked_after;
    ev["device_vram_total_mb"] = dev.total_vram_mb;
    ev["device_overbooked"] = p.device_overbooked;
  }
  trace_.record(exec_.now(), "replica_placed", ev);
  if (p.device_overbooked)
    trace_.record(exec_.now(), "device_vram_overbooked",
                  {{"node", p.node}, {"device", p.vram_device}, {"app", app.spec.id},
                   {"booked_mb", p.device_vram_booked_after},
                   {"total_mb", n->devices()[p.vram_device].total_vram_mb}});
  ReplicaStart launch{n->spec.slurm_job_id, app.spec.id, cluster_.demand(p.demand)->label,
                      p.vram_mb, r.device, app.spec.kind};
  const DemandId demand = p.demand;
  const std::string app_id = app.spec.id;
  const NodeId node = p.node;
  backend_.start_replica(launch, [this, demand, app_id, node](bool ok, const std::string& error) {
    auto it = replica_of_.find(demand);
    if (it == replica_of_.end() || exited_) return;  // stopped or lost meanwhile
    if (!ok) {
      trace_.record(exec_.now(), "replica_start_failed", {{"app", app_id}, {"node", node}, {"error", error}});
      return;
    }
    replica_started(demand, app_id, node);
  });
}

void ControlPlane::replica_started(DemandId demand, const std::string& app_id, const NodeId& node) {
  // The node creates the app's runtime env once; every replica placed there
  // before it exists waits for that same install, then initialises.
  const auto key = std::make_pair(node, app_id);
  auto env = runtime_env_ready_at_.find(key);
  if (env == runtime_env_ready_at_.end())
    env = runtime_env_ready_at_
              .emplace(key, exec_.now() + cfg_.runtime_env_install.sample(rng_.stream("replica.runtime_env")))
              .first;
  Duration delay = std::max<Duration>(0, env->second - exec_.now());
  delay += cfg_.replica_init.sample(rng_.stream("replica.init"));
  exec_.after(delay, [this, demand, app_id] {
    auto it = replica_of_.find(demand);
    if (it == replica_of_.end() || exited_) return;  // stopped or lost meanwhile
    AppRecord& a = apps_.at(app_id);
    ReplicaRecord& rr = a.replicas[it->second.second];
    if (rr.life.state() != ReplicaState::Starting) return;
    rr.life.move(ReplicaState::Running);
    replica_running(a, demand, it->second.second);
    trace_.record(exec_.now(), "replica_running",
                  {{"app", app_id}, {"replica", cluster_.demand(demand)->label}, {"node", rr.node}});
    update_app_state(a, "all replicas running");
  });
}

void ControlPlane::resubmit_replica(AppRecord& app, ReplicaRecord& r) {
  const std::size_t index = replica_of_.at(r.demand).second;
  replica_of_.erase(r.demand);
  replica_stopped(r.demand);
  if (r.life.state() != ReplicaState::Stopped) r.life.move(ReplicaState::Stopped);
  ReplicaRecord fresh;
  fresh.demand = cluster_.submit(DemandKind::Actor, app.spec.id, app.spec.id + "#" + std::to_string(index),
                                 app.replica_request, exec_.now());
  replica_of_[fresh.demand] = {app.spec.id, index};
  r = std::move(fresh);
}

void ControlPlane::withdraw_replicas(AppRecord& app) {
  for (auto& r : app.replicas) {
    const auto st = r.life.state();
    if (st == ReplicaState::Starting || st == ReplicaState::Running)
      if (const Node* n = cluster_.node(r.node); n && n->alive())
        if (const Demand* d = cluster_.demand(r.demand)) backend_.stop_replica(n->spec.slurm_job_id, d->label);
    cluster_.withdraw(r.demand);
    replica_of_.erase(r.demand);
    replica_stopped(r.demand);
    if (r.life.state() != ReplicaState::Stopped) r.life.move(ReplicaState::Stopped);
  }
}

void ControlPlane::stop_app(const std::string& id) {
  auto it = apps_.find(id);
  if (it == apps_.end()) {
    trace_.record(exec_.now(), "stop_ignored", {{"app", id}, {"reason", "unknown app"}});
    return;
  }
  AppRecord& app = it->second;
  // A deploy of this app still queued or in introspection is abandoned.
  deploy_queue_.erase(std::remove(deploy_queue_.begin(), deploy_queue_.end(), id), deploy_queue_.end());
  app.deploy_cancelled = true;
  if (app.life.state() == AppState::Deleted) return;
  set_app_state(app, AppState::Deleting, "stop_app");
  withdraw_replicas(app);
  set_app_state(app, AppState::Deleted, "replicas stopped");
  place_pending();
}

void ControlPlane::delete_app(const std::string& id) {
  stop_app(id);
  if (apps_.count(id)) trace_.record(exec_.now(), "app_deleted", {{"app", id}});
}

// ---------------------------------------------------------- nodes from backend

void ControlPlane::node_registered(NodeSpec spec) {
  if (exited_) {
    // The head is gone; the job keeps its allocation until its time limit.
    trace_.record(exec_.now(), "node_unclaimed", {{"job", spec.slurm_job_id}, {"ip", spec.ip}});
    return;
  }
  Json devices = Json::array();
  for (const auto& d : spec.devices) devices.push_back({{"model", d.model}, {"total_vram_mb", d.total_vram_mb}});
  const std::string job = spec.slurm_job_id, ip = spec.ip;
  const Json resources = spec.resources.to_json();
  NodeId id = cluster_.add_node(std::move(spec), exec_.now());
  trace_.record(exec_.now(), "node_registered",
                {{"node", id}, {"job", job}, {"ip", ip}, {"resources", resources}, {"devices", devices}});
  place_pending();
}

void ControlPlane::node_lost(const std::string& job_id, const std::string& reason) {
  const Node* n = cluster_.node_for_job(job_id);
  if (!n) return;
  const NodeId id = n->id;
  auto lost = cluster_.remove_node(id);
  trace_.record(exec_.now(), "node_lost", {{"node", id}, {"job", job_id}, {"reason", reason}});
  for (const Demand& d : lost) {
    auto it = replica_of_.find(d.id);
    if (it == replica_of_.end()) continue;
    AppRecord& app = apps_.at(it->second.first);
    ReplicaRecord& r = app.replicas[it->second.second];
    const bool was_running = r.life.state() == ReplicaState::Running;
    resubmit_replica(app, r);
    trace_.record(exec_.now(), "replica_lost", {{"app", app.spec.id}, {"node", id}});
    if (was_running && app.life.state() == AppState::Running)
      set_app_state(app, AppState::Unhealthy, "replica lost with node " + id);
  }
  if (!exited_) place_pending();
}

// ------------------------------------------------------------- workers monitor

int ControlPlane::worker_jobs() const {
  return static_cast<int>(backend_.job_count()) - static_cast<int>(deletions_.size());
}

void ControlPlane::sample_status() {
  // Only nodes whose usage changed since the last tick are read again.
  history_.begin_sample(exec_.now());
  for (const Node* n : cluster_.take_usage_changes()) {
    if (n->spec.head) continue;
    if (!n->alive()) {
      history_.remove(n->id);
      continue;
    }
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

void ControlPlane::schedule_tick(Duration delay) {
  monitor_timer_ = exec_.after(delay, [this] {
    monitor_timer_ = 0;
    if (exited_ || shutting_down_) return;
    tick();
    // The loop sleeps `tick` after each pass's work.
    schedule_tick(cfg_.monitor_tick + cfg_.monitor_work.sample(rng_.stream("monitor.work")));
  });
}

void ControlPlane::tick() {
  if (exited_) return;
  sample_status();

  AutoscalerSnapshot s;
  s.now = exec_.now();
  s.actors = RequestList::view(cluster_.pending_queue(DemandKind::Actor));
  s.tasks = RequestList::view(cluster_.pending_queue(DemandKind::Task));
  s.jobs = RequestList::view(cluster_.pending_queue(DemandKind::Job));
  s.creation_in_flight = creation_job_.has_value() || creation_submitting_;
  s.last_scale_up = last_scale_up_;
  s.last_scale_down_check = last_scale_down_check_;
  s.worker_jobs = worker_jobs();
  s.history = &history_;

  const ScaleDecision d = policies_.autoscaler->decide(s, cfg_.autoscaler);
  if (d.scale_down_checked) last_scale_down_check_ = s.now;
  switch (d.action) {
    case ScaleDecision::Action::None: break;
    case ScaleDecision::Action::Error:
      trace_.record(s.now, "autoscaler_error", {{"error", d.note}, {"demand", d.demand.to_json()}});
      break;
    case ScaleDecision::Action::ScaleUp: {
      last_scale_up_ = s.now;
      trace_.record(s.now, "scale_up",
                    {{"gpus", d.job.gpus}, {"cpus", d.job.cpus}, {"mem_per_cpu_gb", d.job.mem_per_cpu_gb},
                     {"demand", d.demand.to_json()}, {"worker_jobs", s.worker_jobs}});
      // The creation is in flight from here until sbatch answers and then
      // until the job's node registers or the job disappears.
      creation_submitting_ = true;
      backend_.submit_worker(d.job, [this](std::optional<std::string> job, const std::string& error) {
        creation_submitting_ = false;
        if (!job) {
          trace_.record(exec_.now(), "worker_creation_failed", {{"error", error}});
          return;
        }
        if (exited_ || shutting_down_) {
          // sbatch answered after shutdown cancelled the creation task; the
          // job is the sweep's (fixed) or is left behind (legacy), as for any
          // job the creation task had submitted.
          return;
        }
        creation_job_ = *job;
        const std::string id = *job;
        exec_.after(cfg_.creation_poll, [this, id] { poll_creation(id); });
      });
      break;
    }
    case ScaleDecision::Action::ScaleDown:
      for (const auto& w : d.remove) {
        if (deletions_.count(w.node_id)) continue;
        trace_.record(s.now, "scale_down",
                      {{"node", w.node_id}, {"job", w.job_id}, {"idle_for_us", d.idle_for}});
        close_worker(w.node_id, w.job_id, {});
      }
      break;
  }
}

void ControlPlane::poll_creation(const std::string& job_id) {
  if (exited_ || creation_job_ != job_id) return;  // cancelled by shutdown
  const auto jobs = backend_.list_jobs();
  const bool listed = std::any_of(jobs.begin(), jobs.end(), [&](const JobInfo& j) { return j.id == job_id; });
  if (!listed) {
    trace_.record(exec_.now(), "worker_creation_failed",
                  {{"job", job_id}, {"error", "Job " + job_id + " is no longer running"}});
    creation_job_.reset();
    return;
  }
  if (const Node* n = cluster_.node_for_job(job_id)) {
    trace_.record(exec_.now(), "worker_joined", {{"job", job_id}, {"node", n->id}});
    creation_job_.reset();
    return;
  }
  exec_.after(cfg_.creation_poll, [this, job_id] { poll_creation(job_id); });
}

void ControlPlane::close_worker(const std::string& node_id, const std::string& job_id,
                                std::function<void()> done) {
  deletions_[node_id] = job_id;
  trace_.record(exec_.now(), "graceful_stop_started", {{"node", node_id}, {"job", job_id}});
  const Node* n = cluster_.node(node_id);
  if (!n || !n->alive()) {
    // The stop task cannot be scheduled on a node that is gone: it times out.
    exec_.after(cfg_.grace_period, [this, node_id, job_id, done] {
      if (exited_) return;
      deletions_.erase(node_id);
      trace_.record(exec_.now(), "graceful_stop_failed",
                    {{"node", node_id}, {"job", job_id}, {"error", "stop command timed out"}});
      if (done) done();
    });
    return;
  }
  backend_.stop_node(job_id);
  wait_node_gone(node_id, job_id, exec_.now() + cfg_.grace_period, std::move(done));
}

void ControlPlane::wait_node_gone(const std::string& node_id, const std::string& job_id, SimTime deadline,
                                  std::function<void()> done) {
  exec_.after(cfg_.stop_poll, [this, node_id, job_id, deadline, done] {
    if (exited_) return;  // the process is gone, and the task with it
    const Node* n = cluster_.node(node_id);
    if (n && n->alive() && exec_.now() < deadline) {
      wait_node_gone(node_id, job_id, deadline, done);
      return;
    }
    cancel_and_wait({job_id}, [this, node_id, job_id, done](std::vector<std::string> cancelled) {
      deletions_.erase(node_id);
      trace_.record(exec_.now(), "graceful_stop_done",
                    {{"node", node_id}, {"job", job_id}, {"cancelled", !cancelled.empty()}});
      if (done) done();
    });
  });
}

void ControlPlane::cancel_and_wait(std::vector<std::string> jobs,
                                   std::function<void(std::vector<std::string>)> done) {
  std::vector<std::string> listed;
  for (const auto& j : backend_.list_jobs())
    if (std::find(jobs.begin(), jobs.end(), j.id) != jobs.end()) listed.push_back(j.id);
  if (listed.empty()) {
    done({});
    return;
  }
  Json ids = Json::array();
  for (const auto& j : listed) ids.push_back(j);
  trace_.record(exec_.now(), "jobs_cancelled", {{"jobs", ids}});
  backend_.cancel_jobs(listed);
  const SimTime deadline = exec_.now() + cfg_.grace_period;
  // The poll holds itself only weakly; each scheduled step holds it strongly,
  // so a run that ends mid-poll frees it with the queue.
  auto poll = std::make_shared<std::function<void()>>();
  std::weak_ptr<std::function<void()>> weak = poll;
  *poll = [this, listed, deadline, done, weak] {
    std::vector<std::string> remaining;
    for (const auto& j : backend_.list_jobs())
      if (std::find(listed.begin(), listed.end(), j.id) != listed.end()) remaining.push_back(j.id);
    if (remaining.empty() || exec_.now() >= deadline) {
      std::vector<std::string> cancelled;
      for (const auto& j : listed)
        if (std::find(remaining.begin(), remaining.end(), j) == remaining.end()) cancelled.push_back(j);
      done(cancelled);
      return;
    }
    if (auto self = weak.lock()) exec_.after(cfg_.cancel_poll, [self] { (*self)(); });
  };
  exec_.after(cfg_.cancel_poll, [poll] { (*poll)(); });
}

void ControlPlane::replica_running(AppRecord& app, DemandId demand, std::size_t index) {
  const ReplicaRecord& r = app.replicas[index];
  running_[demand] = RunningRef{&app, index};
  if (r.device < 0) return;
  running_on_[{r.node, r.device}].insert(demand);
  memory_dirty_.insert({r.node, r.device});
}

void ControlPlane::replica_stopped(DemandId demand) {
  auto it = running_.find(demand);
  if (it == running_.end()) return;
  const ReplicaRecord& r = it->second.app->replicas[it->second.index];
  if (r.device >= 0) {
    const DeviceKey key{r.node, r.device};
    auto on = running_on_.find(key);
    on->second.erase(demand);
    if (on->second.empty()) running_on_.erase(on);
    memory_dirty_.insert(key);
  }
  running_.erase(it);
}

void ControlPlane::memory_changed(const AppRecord& app) {
  for (const auto& r : app.replicas)
    if (r.device >= 0 && running_.count(r.demand)) memory_dirty_.insert({r.node, r.device});
}

void ControlPlane::sample_memory() {
  // The node agent's report of what the driver sees: the declared observed
  // peak of each running replica on its device. Only devices whose replicas
  // changed are read again; the sweep marks every device observed now.
  std::vector<ClusterState::DeviceReading> changed;
  changed.reserve(memory_dirty_.size());
  for (const auto& key : memory_dirty_) {
    std::int64_t used = 0;
    if (auto on = running_on_.find(key); on != running_on_.end())
      for (DemandId demand : on->second) {
        const RunningRef& ref = running_.at(demand);
        const AppRecord& app = *ref.app;
        if (app.replicas[ref.index].life.state() != ReplicaState::Running) continue;
        const auto mb = app.spec.observed_vram_mb.value_or(app.sizing.vram_mb.value_or(0));
        used += mb * 1024 * 1024;
      }
    changed.push_back({key.first, key.second, used});
  }
  memory_dirty_.clear();
  cluster_.sweep_device_memory(exec_.now(), changed);
  // A backend that measures driver memory (live agents) overrides the
  // declared figures where it has a reading.
  if (backend_.measures_memory())
    for (const Node* n : cluster_.alive_nodes())
      for (const auto& d : n->devices())
        if (auto o = backend_.observed_memory(n->spec.slurm_job_id, d.index))
          cluster_.observe_device_memory(n->id, d.index, o->used_bytes, o->at);
}

// ------------------------------------------------------------------ app calls

void ControlPlane::call_app(const std::string& app_id, const Json& payload) {
  const std::uint64_t call_id = ++calls_;
  auto it = apps_.find(app_id);
  const ReplicaRecord* target = nullptr;
  std::size_t index = 0;
  if (it != apps_.end() && !exited_)
    for (std::size_t i = 0; i < it->second.replicas.size() && !target; ++i)
      if (it->second.replicas[i].life.state() == ReplicaState::Running) { target = &it->second.replicas[i]; index = i; }
  const Node* n = target ? cluster_.node(target->node) : nullptr;
  if (!n || !n->alive()) {
    trace_.record(exec_.now(), "call_failed",
                  {{"app", app_id}, {"call", call_id}, {"error", "no running replica of " + app_id}});
    return;
  }
  const std::string replica = app_id + "#" + std::to_string(index);
  const SimTime sent = exec_.now();
  trace_.record(sent, "call_sent", {{"app", app_id}, {"call", call_id}, {"replica", replica}, {"node", n->id}});
  backend_.call_replica(n->spec.slurm_job_id, replica, payload, [this, app_id, call_id, replica, sent](Json result) {
    const bool ok = !(result.is_object() && result.contains("error"));
    trace_.record(exec_.now(), "call_result",
                  {{"app", app_id}, {"call", call_id}, {"replica", replica}, {"ok", ok},
                   {"latency_us", exec_.now() - sent}, {"result", std::move(result)}});
  });
}

// -------------------------------------------------------------------- shutdown

void ControlPlane::shutdown(std::function<void()> done) {
  if (exited_ || shutting_down_) return;
  shutting_down_ = true;
  trace_.record(exec_.now(), "shutdown_started", {});
  // No scale-up while draining.
  if (monitor_timer_) exec_.cancel(monitor_timer_);
  monitor_timer_ = 0;
  // Queued deploys never start; a deploy in introspection is cancelled at its
  // resource check.
  if (deploy_check_timer_) {
    exec_.cancel(deploy_check_timer_);
    deploy_check_timer_ = 0;
    deploy_lock_ = false;
    trace_.record(exec_.now(), "deploy_cancelled", {{"app", deploy_checking_}, {"reason", "shutdown began"}});
    deploy_checking_.clear();
  }
  for (const auto& id : deploy_queue_)
    trace_.record(exec_.now(), "deploy_cancelled", {{"app", id}, {"reason", "shutdown began"}});
  deploy_queue_.clear();
  // The worker undeploys its apps before it closes the workers.
  for (auto& [id, app] : apps_) {
    if (app.life.state() == AppState::Deleted) continue;
    set_app_state(app, AppState::Deleting, "shutdown");
    withdraw_replicas(app);
    set_app_state(app, AppState::Deleted, "undeployed at shutdown");
  }
  for (const auto& [task, id] : introspection_of_) cluster_.withdraw(task);
  introspection_of_.clear();
  if (creation_job_) {
    // The creation task is cancelled; its job is left to the sweep (if any).
    trace_.record(exec_.now(), "worker_creation_cancelled", {{"job", *creation_job_}});
    creation_job_.reset();
  }
  ShutdownSnapshot snap;
  for (const Node* n : cluster_.alive_nodes())
    if (!n->spec.head) snap.registered.push_back({n->id, n->spec.slurm_job_id});
  for (const auto& j : backend_.list_jobs()) snap.jobs.push_back(j.id);
  const ShutdownPlan plan = policies_.shutdown->plan(snap);
  trace_.record(exec_.now(), "shutdown_plan",
                {{"return_early", plan.return_early}, {"drain", plan.drain.size()},
                 {"await_drain", plan.await_drain}, {"cancel_remaining", plan.cancel_remaining},
                 {"jobs_listed", snap.jobs.size()}, {"note", plan.note}});

  auto finish = [this, done] {
    exited_ = true;
    sampler_.cancel();
    shutdown_done_at_ = exec_.now();
    Json left = Json::array();
    for (const auto& j : backend_.list_jobs()) left.push_back(j.id);
    trace_.record(exec_.now(), "shutdown_done", {{"jobs_left", left}});
    if (done) done();
  };
  auto sweep = [this, plan, finish] {
    if (!plan.cancel_remaining) { finish(); return; }
    std::vector<std::string> ids;
    for (const auto& j : backend_.list_jobs()) ids.push_back(j.id);
    if (ids.empty()) { finish(); return; }
    cancel_and_wait(ids, [finish](std::vector<std::string>) { finish(); });
  };
  if (plan.return_early) { finish(); return; }
  if (plan.drain.empty() || !plan.await_drain) {
    for (const auto& w : plan.drain) close_worker(w.node_id, w.job_id, {});
    sweep();
    return;
  }
  auto remaining = std::make_shared<std::size_t>(plan.drain.size());
  for (const auto& w : plan.drain)
    close_worker(w.node_id, w.job_id, [remaining, sweep] {
      if (--*remaining == 0) sweep();
    });
}

}  // namespace vramsim
