// AppsManager's replica lifecycle, Ray Serve's per-deployment replica
// management (DeploymentState): the replicas an app asks for are submitted
// as demand, placed, started on their node's worker, resubmitted when their
// node is lost, scaled to a target and withdrawn. The app-level side
// (deploy, admission, app state, stop and delete) is in apps_manager.cpp.
#include <algorithm>

#include "control/apps_manager.hpp"

namespace vramsim {

void AppsManager::submit_replicas(AppRecord& app, const std::string& reason) {
  const std::string& id = app.spec.id;
  // As Ray reports required_resources: only amounts above zero
  // (prepare_resources, python/ray/includes/task_options_utils.pxi@5d44e1f0;
  // ResourceSet::Set erases zeros, src/ray/common/scheduling/
  // resource_set.cc@e9390d53). A replica of num_cpus=0 lists no CPU, and
  // _check_scale_up's req.get("CPU", 1) reads 1: the legacy divisor never
  // sees 0.
  ResourceSet req;
  if (app.spec.cpus > 0) req.set(kCPU, app.spec.cpus);
  if (app.sizing.num_gpus > 0) req.set(kGPU, app.sizing.num_gpus);
  if (app.spec.memory_bytes > 0) req.set(kMemory, static_cast<double>(app.spec.memory_bytes));
  if (app.sizing.vram_mb) req.set(kVramMB, static_cast<double>(*app.sizing.vram_mb));
  for (const auto& [name, amount] : app.spec.resources) req.set(name, amount);
  app.replica_request = req;
  // A redeploy queued behind another of the same app replaces what that one
  // created after this deploy was requested.
  withdraw_replicas(app);
  app.replicas.clear();
  // A deploy starts Ray's count of failed starts afresh.
  app.start_failures = 0;
  app.replica_has_started = false;
  set_app_state(app, AppState::Deploying, reason);
  for (int i = 0; i < app.spec.replicas; ++i) add_replica(app);
  // serve.run deploys the app's proxy beside its deployments, the ingress
  // last (build_app.py:_build_app_recursive lists children first,
  // :180@5866967ffd), so its replica is the newest actor.
  submit_proxy(app);
  trace_.record(exec_.now(), TraceKind::replicas_submitted,
                {{"app", id}, {"replicas", app.spec.replicas}, {"resources", req.to_json()}});
  // An autoscaled deployment may start at zero replicas: it is RUNNING with
  // none, and its first request starts one.
  if (app.replicas.empty()) update_app_state(app, "0 replicas");
  place_pending();
}

void AppsManager::add_replica(AppRecord& app) {
  const std::string& id = app.spec.id;
  ReplicaRecord r;
  r.demand = cluster_.submit(DemandKind::Actor, id, id + "#" + std::to_string(app.replicas.size()),
                             app.replica_request, exec_.now());
  replica_of_[r.demand] = {id, app.replicas.size()};
  app.replicas.push_back(std::move(r));
}

int AppsManager::live_replicas(const AppRecord& app) {
  return static_cast<int>(std::count_if(app.replicas.begin(), app.replicas.end(), [](const ReplicaRecord& r) {
    return r.life.state() != ReplicaState::Stopped;
  }));
}

bool AppsManager::scale_replicas(const std::string& id, int target, const std::string& reason) {
  auto it = apps_.find(id);
  if (it == apps_.end() || ctx_.exited || ctx_.shutting_down) return false;
  AppRecord& app = it->second;
  const AppState st = app.life.state();
  if (st != AppState::Running && st != AppState::Deploying && st != AppState::Unhealthy) return false;
  const int live = live_replicas(app);
  if (target == live) return true;
  if (target > live) {
    for (int i = live; i < target; ++i) add_replica(app);
    trace_.record(exec_.now(), TraceKind::replicas_added,
                  {{"app", id}, {"from", live}, {"to", target}, {"reason", reason}});
    place_pending();
    return true;
  }
  // Pending first, then starting, then running; newest first in each.
  std::vector<std::size_t> victims;
  for (ReplicaState want : {ReplicaState::Pending, ReplicaState::Starting, ReplicaState::Running})
    for (std::size_t i = app.replicas.size(); i-- > 0 && static_cast<int>(victims.size()) < live - target;)
      if (app.replicas[i].life.state() == want) victims.push_back(i);
  for (std::size_t i : victims) withdraw_replica(app, i);
  trace_.record(exec_.now(), TraceKind::replicas_removed, {{"app", id}, {"from", live}, {"to", target}, {"reason", reason}});
  place_pending();
  return true;
}

void AppsManager::place_pending() {
  for (const Placement& p : cluster_.schedule_pending()) {
    if (auto proxy = proxy_of_.find(p.demand); proxy != proxy_of_.end()) {
      proxy_placed(apps_.at(proxy->second), p);
      continue;
    }
    auto it = replica_of_.find(p.demand);
    if (it == replica_of_.end()) {
      const Demand* d = cluster_.demand(p.demand);
      trace_.record(exec_.now(), TraceKind::task_placed, {{"label", d ? d->label : ""}, {"node", p.node}});
      auto task = introspection_of_.find(p.demand);
      if (task != introspection_of_.end()) introspection_placed(task->second, p.demand);
      if (submit_of_.count(p.demand)) submit_task_placed(p.demand);
      continue;
    }
    AppRecord& app = apps_.at(it->second.first);
    replica_placed(app, app.replicas[it->second.second], p);
  }
}

void AppsManager::replica_placed(AppRecord& app, ReplicaRecord& r, const Placement& p) {
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
  trace_.record(exec_.now(), TraceKind::replica_placed, ev);
  if (p.device_overbooked)
    trace_.record(exec_.now(), TraceKind::device_vram_overbooked,
                  {{"node", p.node}, {"device", p.vram_device}, {"app", app.spec.id},
                   {"booked_mb", p.device_vram_booked_after},
                   {"total_mb", n->devices()[p.vram_device].total_vram_mb}});
  ReplicaStart launch{n->spec.slurm_job_id, app.spec.id, cluster_.demand(p.demand)->label,
                      p.vram_mb, r.device, app.spec.kind,
                      app.spec.device_memory_checked ? replica_device_mb(app.spec).value_or(0) : 0};
  const DemandId demand = p.demand;
  const std::string app_id = app.spec.id;
  const NodeId node = p.node;
  backend_.start_replica(launch, [this, demand, app_id, node, launch](bool ok, const std::string& error) {
    auto it = replica_of_.find(demand);
    if (it == replica_of_.end() || ctx_.exited) return;  // stopped or lost meanwhile
    if (!ok) {
      trace_.record(exec_.now(), TraceKind::replica_start_failed, {{"app", app_id}, {"node", node}, {"error", error}});
      return;
    }
    replica_started(demand, app_id, node, launch);
  });
}

void AppsManager::replica_started(DemandId demand, const std::string& app_id, const NodeId& node,
                                  const ReplicaStart& launch) {
  // The node creates the app's runtime env once; every replica placed there
  // before it exists waits for that same install, then initialises.
  const auto key = std::make_pair(node, app_id);
  auto env = runtime_env_ready_at_.find(key);
  if (env == runtime_env_ready_at_.end())
    env = runtime_env_ready_at_
              .emplace(key, exec_.now() + cfg_.runtime_env_install.sample(ctx_.rng.stream("replica.runtime_env")))
              .first;
  Duration delay = std::max<Duration>(0, env->second - exec_.now());
  delay += cfg_.replica_init.sample(ctx_.rng.stream("replica.init"));
  exec_.after(delay, [this, demand, app_id, launch] {
    auto it = replica_of_.find(demand);
    if (it == replica_of_.end() || ctx_.exited) return;  // stopped or lost meanwhile
    AppRecord& a = apps_.at(app_id);
    ReplicaRecord& rr = a.replicas[it->second.second];
    if (rr.life.state() != ReplicaState::Starting) return;
    // The constructor runs on the device: it may not fit what CUDA can give.
    if (auto failure = backend_.construct_replica(launch)) {
      replica_failed(a, it->second.second, *failure);
      return;
    }
    a.replica_has_started = true;
    rr.life.move(ReplicaState::Running);
    cluster_.actor_created(demand);
    memory_.running(a, demand, it->second.second);
    if (on_replica_running) on_replica_running(a, it->second.second);
    trace_.record(exec_.now(), TraceKind::replica_running,
                  {{"app", app_id}, {"replica", cluster_.demand(demand)->label}, {"node", rr.node}});
    update_app_state(a, "all replicas running");
  });
}

void AppsManager::resubmit_replica(AppRecord& app, ReplicaRecord& r) {
  const std::size_t index = replica_of_.at(r.demand).second;
  if (r.life.state() == ReplicaState::Running && on_replica_gone) on_replica_gone(app, index, true);
  replica_of_.erase(r.demand);
  memory_.stopped(r.demand);
  if (r.life.state() != ReplicaState::Stopped) r.life.move(ReplicaState::Stopped);
  ReplicaRecord fresh;
  fresh.demand = cluster_.submit(DemandKind::Actor, app.spec.id, app.spec.id + "#" + std::to_string(index),
                                 app.replica_request, exec_.now());
  replica_of_[fresh.demand] = {app.spec.id, index};
  r = std::move(fresh);
}

void AppsManager::withdraw_replicas(AppRecord& app) {
  for (std::size_t i = 0; i < app.replicas.size(); ++i) withdraw_replica(app, i);
}

void AppsManager::withdraw_replica(AppRecord& app, std::size_t index) {
  ReplicaRecord& r = app.replicas[index];
  const auto st = r.life.state();
  if (st == ReplicaState::Running && on_replica_gone) on_replica_gone(app, index, false);
  if (st == ReplicaState::Starting || st == ReplicaState::Running)
    if (const Node* n = cluster_.node(r.node); n && n->alive())
      if (const Demand* d = cluster_.demand(r.demand)) backend_.stop_replica(n->spec.slurm_job_id, d->label);
  cluster_.withdraw(r.demand);
  replica_of_.erase(r.demand);
  memory_.stopped(r.demand);
  if (r.life.state() != ReplicaState::Stopped) r.life.move(ReplicaState::Stopped);
}

void AppsManager::replica_failed(AppRecord& app, std::size_t index, const ReplicaFailure& f) {
  const ReplicaRecord& r = app.replicas[index];
  const Node* n = cluster_.node(r.node);
  Json ev = {{"app", app.spec.id}, {"replica", app.spec.id + "#" + std::to_string(index)}, {"node", r.node},
             {"job", n ? n->spec.slurm_job_id : ""}, {"device", f.device}, {"reason", f.reason},
             {"device_total_mb", f.device_total_mb}, {"held_mb", f.held_mb},
             {"free_mb", f.device_total_mb - f.held_mb}, {"needed_mb", f.needed_mb},
             {"replicas_held", f.replicas_held}, {"context_mb", app.spec.cuda_context_mb}};
  if (n && f.device >= 0 && static_cast<std::size_t>(f.device) < n->devices().size()) {
    const auto& d = n->devices()[static_cast<std::size_t>(f.device)];
    ev["vram_total_mb"] = d.total_vram_mb;
    ev["vram_booked_mb"] = d.vram_booked_mb;
  }
  // Ray Serve (deployment_state.py, docs/models.md): the failure is counted,
  // the replica stops, and a replacement starts until the count reaches
  // min(20, 3 x the target); a deployment none of whose replicas ever ran
  // then fails for good.
  ++app.start_failures;
  app.start_error = f.reason + " on device " + std::to_string(f.device) + " (" + std::to_string(f.device_total_mb - f.held_mb) +
                    " MiB free, " + std::to_string(f.needed_mb) + " MiB needed)";
  const int target = live_replicas(app);
  const int threshold = std::min(kMaxConstructorRetries, kRetriesPerReplica * target);
  ev["failures"] = app.start_failures;
  ev["threshold"] = threshold;
  trace_.record(exec_.now(), TraceKind::replica_failed, ev);
  withdraw_replica(app, index);
  if (!app.replica_has_started && app.start_failures >= threshold) {
    const std::string msg = "The deployment failed to start " + std::to_string(app.start_failures) +
                            " times in a row. This may be due to a problem with its constructor or initial health "
                            "check failing. See controller logs for details. Error:\n" + app.start_error;
    withdraw_replicas(app);
    app.message = msg;
    trace_.record(exec_.now(), TraceKind::deployment_failed,
                  {{"app", app.spec.id}, {"failures", app.start_failures}, {"message", msg}});
    set_app_state(app, AppState::DeployFailed, "replica constructor failed");
    place_pending();
    return;
  }
  // The replacement: pending at once (so the app is never counted RUNNING
  // short of its target), placed from Ray's next control loop on, 0.1 s
  // later (CONTROL_LOOP_INTERVAL_S).
  ReplicaRecord fresh;
  fresh.demand = cluster_.submit_held(DemandKind::Actor, app.spec.id, app.spec.id + "#" + std::to_string(index),
                                      app.replica_request, exec_.now());
  replica_of_[fresh.demand] = {app.spec.id, index};
  const DemandId demand = fresh.demand;
  app.replicas[index] = std::move(fresh);
  exec_.after(kControlLoop, [this, demand] {
    if (cluster_.release_hold(demand)) place_pending();
  });
}

}  // namespace vramsim
