#include "control/apps_manager.hpp"

#include <algorithm>

namespace vramsim {

AppsManager::AppsManager(ControlContext& ctx, ReplicaMemory& memory)
    : ctx_(ctx), exec_(ctx.exec), backend_(ctx.backend), cluster_(ctx.cluster), trace_(ctx.trace), cfg_(ctx.cfg),
      memory_(memory) {}

const AppRecord* AppsManager::app(const std::string& id) const {
  auto it = apps_.find(id);
  return it == apps_.end() ? nullptr : &it->second;
}

void AppsManager::deploy(const AppSpec& spec) {
  if (ctx_.exited || ctx_.shutting_down) {
    trace_.record(exec_.now(), TraceKind::deploy_ignored,
                  {{"app", spec.id}, {"reason", ctx_.exited ? "worker shut down" : "shutdown in progress"}});
    return;
  }
  auto [it, fresh] = apps_.try_emplace(spec.id);
  AppRecord& app = it->second;
  if (!fresh) {
    // A redeploy replaces the replicas once admitted; drop the old ones now.
    withdraw_replicas(app);
    withdraw_proxy(app);
    app.replicas.clear();
    app.running_at.reset();
  }
  app.spec = spec;
  app.deploy_cancelled = false;
  app.requested_at = exec_.now();
  app.admitted.reset();
  app.message.clear();
  Json requested = {{"app", spec.id}, {"gpu_memory_mb", spec.gpu_memory_mb ? Json(*spec.gpu_memory_mb) : Json()},
                    {"replicas", spec.replicas}, {"cpus", spec.cpus}};
  if (spec.num_gpus) requested["num_gpus"] = *spec.num_gpus;
  trace_.record(exec_.now(), TraceKind::deploy_requested, std::move(requested));
  deploy_queue_.push_back(spec.id);
  next_deploy();
}

void AppsManager::next_deploy() {
  if (deploy_lock_ || deploy_queue_.empty() || ctx_.exited || ctx_.shutting_down) return;
  deploy_lock_ = true;  // deploys are serialised, as under the real lock
  const std::string id = deploy_queue_.front();
  deploy_queue_.pop_front();
  // The introspection task goes out before the resource check and is
  // awaited by it. While its runtime env builds it is pending with no stated
  // resources: a monitor pass then scales up "with defaults", so on a cold
  // cluster the check sees that worker job in flight.
  DemandId task = cluster_.submit_held(DemandKind::Task, id, "introspection " + id, cfg_.introspection_request,
                                       exec_.now());
  introspection_of_[task] = id;
  deploy_checking_ = id;
  const Duration env = introspection_env_built_ ? 0 : cfg_.introspection_env_build;
  trace_.record(exec_.now(), TraceKind::introspection_submitted,
                {{"app", id}, {"resources", cfg_.introspection_request.to_json()}, {"env_build_us", env}});
  if (env == 0) {
    introspection_env_ready(task);
    return;
  }
  exec_.after(env, [this, task] { introspection_env_ready(task); });
}

void AppsManager::introspection_env_ready(DemandId task) {
  if (!introspection_of_.count(task) || ctx_.exited) return;  // withdrawn by shutdown meanwhile
  introspection_env_built_ = true;
  cluster_.release_hold(task);
  place_pending();
}

void AppsManager::introspection_placed(const std::string& id, DemandId task) {
  // The task runs once it has a node, holding what it asked for; build()
  // awaits it, so the resource check follows its end.
  exec_.after(cfg_.introspection_duration, [this, id, task] {
    if (!introspection_of_.erase(task)) return;  // withdrawn by shutdown meanwhile
    cluster_.withdraw(task);
    trace_.record(exec_.now(), TraceKind::introspection_done, {{"app", id}});
    if (ctx_.exited) return;
    check_deploy(id);
    place_pending();
  });
}

void AppsManager::submit_task(AppRecord& app, const std::string& reason) {
  // A window of 0 s no monitor pass can see: the replicas go out now.
  if (cfg_.submit_worker_start == 0 && cfg_.submit_duration == 0) {
    submit_replicas(app, reason);
    return;
  }
  const std::string& id = app.spec.id;
  // A submit of this app still in flight is superseded (the manager cancels
  // the old deployment task before it starts a new one).
  withdraw_submit_task(id);
  // num_cpus=0: Ray lists it with no required resources.
  const DemandId task = cluster_.submit_held(DemandKind::Task, id, "submit " + id, ResourceSet{}, exec_.now());
  submit_of_[task] = {id, reason};
  trace_.record(exec_.now(), TraceKind::submit_task_submitted,
                {{"app", id}, {"worker_start_us", cfg_.submit_worker_start}, {"duration_us", cfg_.submit_duration}});
  exec_.after(cfg_.submit_worker_start, [this, task] {
    if (!submit_of_.count(task) || ctx_.exited) return;  // withdrawn meanwhile
    if (cluster_.release_hold(task)) place_pending();
  });
}

void AppsManager::withdraw_submit_task(const std::string& app_id) {
  for (auto it = submit_of_.begin(); it != submit_of_.end();)
    if (it->second.first == app_id) {
      cluster_.withdraw(it->first);
      it = submit_of_.erase(it);
    } else {
      ++it;
    }
}

void AppsManager::submit_task_placed(DemandId task) {
  exec_.after(cfg_.submit_duration, [this, task] {
    auto it = submit_of_.find(task);
    if (it == submit_of_.end()) return;  // withdrawn by a stop or shutdown meanwhile
    const auto [id, reason] = it->second;
    submit_of_.erase(it);
    cluster_.withdraw(task);
    trace_.record(exec_.now(), TraceKind::submit_task_done, {{"app", id}});
    if (ctx_.exited || ctx_.shutting_down) return;
    submit_replicas(apps_.at(id), reason);
  });
}

void AppsManager::node_registered(const NodeId& node) {
  const Duration lag = cfg_.dashboard_first_report.sample(ctx_.rng.stream("dashboard.first_report"));
  if (lag <= 0) return;
  dashboard_unreported_.insert(node);
  gpu_view_cache_.reset();
  exec_.after(lag, [this, node] {
    if (dashboard_unreported_.erase(node)) gpu_view_cache_.reset();
  });
}

ClusterGpuView AppsManager::gpu_view() const {
  if (gpu_view_cache_ && gpu_view_cache_->first == cluster_.membership_version()) return gpu_view_cache_->second;
  ClusterGpuView v;
  v.elastic = cfg_.slurm_mode;
  for (const Node* n : cluster_.alive_nodes()) {
    if (n->total().has(kVramMB)) v.vram_advertised = true;
    // The dashboard's summary has no data for a node before its first
    // report (REPORTER_UPDATE_INTERVAL_MS, reporter_consts.py:5-6@5866967ffd).
    if (dashboard_unreported_.count(n->id)) continue;
    // ProxyActor.get_gpu_memory_sizing (proxy_actor.py:439-474@1725d5c): per
    // node, int(its GPUs' total MiB / int(its GPU resource)), nodes without
    // either skipped; the smallest over the nodes. The node's mean, so a node
    // of mixed GPUs counts as its mean, not its smallest.
    const auto gpus = static_cast<std::int64_t>(n->total().get(kGPU));
    if (gpus <= 0 || n->devices().empty()) continue;
    std::int64_t total_mb = 0;
    for (const auto& d : n->devices()) total_mb += d.total_vram_mb;
    const std::int64_t per_gpu_mb = total_mb / gpus;
    if (per_gpu_mb > 0 && (!v.min_gpu_total_mb || per_gpu_mb < *v.min_gpu_total_mb)) v.min_gpu_total_mb = per_gpu_mb;
  }
  gpu_view_cache_.emplace(cluster_.membership_version(), v);
  return v;
}

AdmissionSnapshot AppsManager::admission_snapshot() const {
  AdmissionSnapshot s;
  s.slurm_mode = cfg_.slurm_mode;
  s.max_workers = cfg_.autoscaler.max_workers;
  s.defaults = cfg_.autoscaler.defaults;
  const StatusNodes* listed = status_nodes_ ? status_nodes_() : nullptr;
  s.nodes = listed ? HeadroomList::view(*listed) : HeadroomList::view(cluster_);
  if (cfg_.slurm_mode) {
    // _check_resources counts get_num_worker_jobs(): squeue minus the
    // deletions in progress.
    for (const auto& j : backend_.list_jobs()) {
      ++s.worker_jobs;
      if (!cluster_.node_for_job(j.id)) ++s.unregistered_jobs;
    }
    if (worker_jobs_) s.worker_jobs = worker_jobs_();
  }
  return s;
}

namespace {

// What the builder sizes for one deployment class of the app.
SizingRequest sizing_request(const AppSpec& spec) {
  SizingRequest r(spec.id, spec.gpu_memory_mb, spec.disable_gpu);
  r.gpu_milli = spec.gpu_milli;
  r.num_gpus = spec.num_gpus;
  return r;
}

}  // namespace

void AppsManager::check_deploy(const std::string& id) {
  deploy_lock_ = false;
  deploy_checking_.clear();
  AppRecord& app = apps_.at(id);
  if (app.deploy_cancelled) {
    trace_.record(exec_.now(), TraceKind::deploy_cancelled, {{"app", id}, {"reason", "stopped before admission"}});
    next_deploy();
    return;
  }
  const auto view = gpu_view();
  memory_.resizing(app);
  app.sizing = ctx_.policies.sizing->size(sizing_request(app.spec), view);
  trace_.record(exec_.now(), TraceKind::sizing,
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
  // AppBuilder._sum_resources: ONE replica of each deployment class (an app
  // here is one class), whatever num_replicas says; the replicas are bound
  // later. So the check admits what a single worker can host one replica of.
  AppDemand demand{id, app.spec.cpus, ctx_.policies.sizing->sum_num_gpus({{app.sizing.num_gpus, 1}}),
                   static_cast<double>(app.spec.memory_bytes + app.spec.proxy_memory_bytes),
                   app.sizing.vram_mb ? static_cast<double>(*app.sizing.vram_mb) : 0.0, app.spec.resources};
  // An application of several deployments is admitted once, at its
  // ingress, for all of them: _sum_resources sums one replica of every
  // deployment class, each sized first (builder.py:382-406, 671-672
  // @03b490c), and the app's proxy once. Its other deployments follow the
  // ingress's decision.
  if (!app.spec.application_members.empty()) {
    const std::string& ingress = app.spec.application_members.front();
    if (ingress != id) {
      const auto ing = apps_.find(ingress);
      if (ing != apps_.end() && ing->second.admitted) {
        app.admitted = ing->second.admitted;
        app.admission_reason = "with its application's ingress " + ingress;
        app.message = ing->second.message;
        trace_.record(exec_.now(), TraceKind::admission,
                      {{"app", id}, {"admitted", *app.admitted}, {"reason", app.admission_reason},
                       {"message", app.message}});
        if (!*app.admitted) {
          set_app_state(app, AppState::DeployFailed, app.message);
          next_deploy();
          return;
        }
        submit_task(app, "admitted: " + app.admission_reason);
        next_deploy();
        return;
      }
    } else {
      std::vector<std::pair<double, int>> gpus{{app.sizing.num_gpus, 1}};
      for (std::size_t k = 1; k < app.spec.application_members.size(); ++k) {
        const auto m = apps_.find(app.spec.application_members[k]);
        if (m == apps_.end()) continue;
        const AppSpec& ms = m->second.spec;
        const SizingResult mr = ctx_.policies.sizing->size(sizing_request(ms), view);
        demand.cpus += ms.cpus;
        demand.memory += static_cast<double>(ms.memory_bytes);
        if (mr.vram_mb) demand.vram_mb += static_cast<double>(*mr.vram_mb);
        gpus.emplace_back(mr.num_gpus, 1);
      }
      demand.gpus = ctx_.policies.sizing->sum_num_gpus(gpus);
    }
  }
  auto snap = admission_snapshot();
  if (app.application_resources) snap.add_back = *app.application_resources;
  const auto decision = ctx_.policies.admission->check(demand, snap);
  app.admitted = decision.admitted;
  app.admission_reason = decision.reason;
  app.message = decision.message;
  Json admission = {{"app", id}, {"admitted", decision.admitted}, {"reason", decision.reason},
                    {"requested", {{"cpus", demand.cpus}, {"gpus", demand.gpus}, {"memory", demand.memory}}},
                    {"worker_jobs", snap.worker_jobs}, {"unregistered_jobs", snap.unregistered_jobs},
                    {"max_workers", snap.max_workers}, {"message", decision.message}};
  if (app.application_resources)
    admission["added_back"] = {{"cpus", snap.add_back.cpus}, {"gpus", snap.add_back.gpus}, {"memory", snap.add_back.memory}};
  trace_.record(exec_.now(), TraceKind::admission, std::move(admission));
  if (!decision.admitted) {
    set_app_state(app, AppState::DeployFailed, decision.message);
    next_deploy();
    return;
  }
  app.redeploy_tracked = true;
  app.application_resources = AppResources{demand.cpus, demand.gpus, demand.memory};
  submit_task(app, "admitted: " + decision.reason);
  next_deploy();
}

void AppsManager::monitor_applications() {
  // _REDEPLOY_BACKOFF_INITIAL_SECONDS and _MAX_SECONDS (manager.py:109-110@fba5ffe).
  constexpr Duration kInitial = 10 * kSecond, kMax = 600 * kSecond;
  const SimTime now = exec_.now();
  for (auto& [id, app] : apps_) {
    if (!app.spec.auto_redeploy || !app.redeploy_tracked) continue;
    const AppState st = app.life.state();
    if (st == AppState::Running) {
      app.redeploy_failures = 0;
      app.redeploy_next_at.reset();
      continue;
    }
    if (st != AppState::DeployFailed && st != AppState::Unhealthy) continue;  // deploying: wait
    if (app.redeploy_next_at && now < *app.redeploy_next_at) continue;
    const int attempt = app.redeploy_failures + 1;
    Duration delay = kInitial;
    for (int k = 1; k < attempt && delay < kMax; ++k) delay *= 2;
    app.redeploy_failures = attempt;
    app.redeploy_next_at = now + std::min(delay, kMax);
    trace_.record(now, TraceKind::auto_redeploy,
                  {{"app", id}, {"state", name(st)}, {"attempt", attempt}, {"next_after_us", std::min(delay, kMax)}});
    submit_task(app, "auto-redeploy, attempt " + std::to_string(attempt));
  }
}

void AppsManager::set_app_state(AppRecord& app, AppState s, const std::string& reason) {
  if (app.life.state() == s) return;
  const char* from = name(app.life.state());
  app.life.move(s);
  if (s == AppState::Running && !app.running_at) app.running_at = exec_.now();
  // Healthy: Ray Serve resets its count of failed starts.
  if (s == AppState::Running) app.start_failures = 0;
  trace_.record(exec_.now(), TraceKind::app_state,
                {{"app", app.spec.id}, {"from", from}, {"to", name(s)}, {"reason", reason}});
}

void AppsManager::update_app_state(AppRecord& app, const std::string& reason) {
  const auto s = app.life.state();
  if (s != AppState::Deploying && s != AppState::Unhealthy) return;
  // Replicas a scale-down stopped no longer count.
  const bool all_running = std::all_of(app.replicas.begin(), app.replicas.end(), [](const ReplicaRecord& r) {
    return r.life.state() == ReplicaState::Running || r.life.state() == ReplicaState::Stopped;
  });
  if (!proxy_running(app)) return;  // Serve's app is RUNNING once all its deployments are
  if (all_running && live_replicas(app) > 0) set_app_state(app, AppState::Running, reason);
  else if (app.replicas.empty() && app.spec.serve && app.spec.serve->autoscaling)
    set_app_state(app, AppState::Running, "0 replicas");
}

void AppsManager::stop_app(const std::string& id) {
  auto it = apps_.find(id);
  if (it == apps_.end()) {
    trace_.record(exec_.now(), TraceKind::stop_ignored, {{"app", id}, {"reason", "unknown app"}});
    return;
  }
  AppRecord& app = it->second;
  // _undeploy_application drops the app and its backoff (manager.py:639-640).
  app.redeploy_tracked = false;
  app.application_resources.reset();
  app.redeploy_failures = 0;
  app.redeploy_next_at.reset();
  // A deploy of this app still queued or in introspection is abandoned.
  deploy_queue_.erase(std::remove(deploy_queue_.begin(), deploy_queue_.end(), id), deploy_queue_.end());
  app.deploy_cancelled = true;
  // Its submit task, if still in flight, is cancelled with the deployment task.
  withdraw_submit_task(id);
  if (app.life.state() == AppState::Deleted) return;
  set_app_state(app, AppState::Deleting, "stop_app");
  withdraw_replicas(app);
  withdraw_proxy(app);
  set_app_state(app, AppState::Deleted, "replicas stopped");
  place_pending();
}

void AppsManager::delete_app(const std::string& id) {
  stop_app(id);
  if (apps_.count(id)) trace_.record(exec_.now(), TraceKind::app_deleted, {{"app", id}});
}

void AppsManager::node_lost(const NodeId& id, const std::vector<Demand>& lost) {
  if (dashboard_unreported_.erase(id)) gpu_view_cache_.reset();
  for (const Demand& d : lost) {
    if (proxy_lost(d.id, id)) continue;
    auto it = replica_of_.find(d.id);
    if (it == replica_of_.end()) continue;
    AppRecord& app = apps_.at(it->second.first);
    ReplicaRecord& r = app.replicas[it->second.second];
    const bool was_running = r.life.state() == ReplicaState::Running;
    resubmit_replica(app, r);
    trace_.record(exec_.now(), TraceKind::replica_lost, {{"app", app.spec.id}, {"node", id}});
    if (was_running && app.life.state() == AppState::Running)
      set_app_state(app, AppState::Unhealthy, "replica lost with node " + id);
  }
}

void AppsManager::undeploy_all() {
  // Queued deploys never start; a deploy in introspection never reaches its
  // resource check.
  if (!deploy_checking_.empty()) {
    deploy_lock_ = false;
    trace_.record(exec_.now(), TraceKind::deploy_cancelled, {{"app", deploy_checking_}, {"reason", "shutdown began"}});
    deploy_checking_.clear();
  }
  for (const auto& id : deploy_queue_)
    trace_.record(exec_.now(), TraceKind::deploy_cancelled, {{"app", id}, {"reason", "shutdown began"}});
  deploy_queue_.clear();
  // The worker undeploys its apps before it closes the workers.
  for (auto& [id, app] : apps_) {
    if (app.life.state() == AppState::Deleted) continue;
    set_app_state(app, AppState::Deleting, "shutdown");
    withdraw_replicas(app);
    withdraw_proxy(app);
    set_app_state(app, AppState::Deleted, "undeployed at shutdown");
  }
  for (const auto& [task, id] : introspection_of_) cluster_.withdraw(task);
  introspection_of_.clear();
  for (const auto& [task, what] : submit_of_) cluster_.withdraw(task);
  submit_of_.clear();
}

}  // namespace vramsim
