// The app's ProxyDeployment replica (bootstrap.py:718-742@fba5ffe): serve.run
// deploys it beside the user's deployments, a Ray Serve replica of
// num_cpus=0 asking `proxy_memory_in_gb` of memory, with its own runtime env
// (pip = proxy_pip, the same list for every app). Ray places it like any
// actor, lists it PENDING_CREATION while it waits for a node or installs
// that env (so it is pending demand to the SLURM autoscaler, as a user
// replica is), and the application is RUNNING only once it runs too.
#include "control/apps_manager.hpp"

namespace vramsim {

bool AppsManager::has_proxy(const AppSpec& spec) {
  // One per application, deployed with its ingress; an app of proxy memory
  // 0 stands for a scheduler's pod (openb), not a BioEngine app.
  if (spec.proxy_memory_bytes <= 0) return false;
  return spec.application_members.empty() || spec.application_members.front() == spec.id;
}

void AppsManager::submit_proxy(AppRecord& app) {
  withdraw_proxy(app);
  if (!has_proxy(app.spec)) return;
  ResourceSet req;
  req.set(kMemory, static_cast<double>(app.spec.proxy_memory_bytes));
  ReplicaRecord r;
  r.demand = cluster_.submit(DemandKind::Actor, app.spec.id, app.spec.id + "#proxy", req, exec_.now());
  proxy_of_[r.demand] = app.spec.id;
  app.proxy = std::move(r);
}

void AppsManager::proxy_placed(AppRecord& app, const Placement& p) {
  ReplicaRecord& r = *app.proxy;
  r.life.move(ReplicaState::Starting);
  r.node = p.node;
  const Node* n = cluster_.node(p.node);
  trace_.record(exec_.now(), TraceKind::proxy_placed,
                {{"app", app.spec.id}, {"node", p.node}, {"job", n ? n->spec.slurm_job_id : ""},
                 {"memory", app.spec.proxy_memory_bytes}});
  // proxy_pip is one list for every app: a node installs that env once.
  auto env = proxy_env_ready_at_.find(p.node);
  if (env == proxy_env_ready_at_.end())
    env = proxy_env_ready_at_
              .emplace(p.node, exec_.now() + cfg_.proxy_env_install.sample(ctx_.rng.stream("proxy.runtime_env")))
              .first;
  const DemandId demand = p.demand;
  const std::string id = app.spec.id;
  exec_.after(std::max<Duration>(0, env->second - exec_.now()), [this, demand, id] {
    auto it = proxy_of_.find(demand);
    if (it == proxy_of_.end() || ctx_.exited) return;  // withdrawn or lost meanwhile
    AppRecord& a = apps_.at(id);
    a.proxy->life.move(ReplicaState::Running);
    cluster_.actor_created(demand);
    trace_.record(exec_.now(), TraceKind::proxy_running, {{"app", id}, {"node", a.proxy->node}});
    update_app_state(a, "proxy running");
  });
}

bool AppsManager::proxy_running(const AppRecord& app) {
  return !app.proxy || app.proxy->life.state() == ReplicaState::Running;
}

void AppsManager::withdraw_proxy(AppRecord& app) {
  if (!app.proxy) return;
  cluster_.withdraw(app.proxy->demand);
  proxy_of_.erase(app.proxy->demand);
  app.proxy.reset();
}

bool AppsManager::proxy_lost(DemandId demand, const NodeId& node) {
  auto it = proxy_of_.find(demand);
  if (it == proxy_of_.end()) return false;
  AppRecord& app = apps_.at(it->second);
  const bool was_running = app.proxy->life.state() == ReplicaState::Running;
  submit_proxy(app);
  trace_.record(exec_.now(), TraceKind::proxy_lost, {{"app", app.spec.id}, {"node", node}});
  if (was_running && app.life.state() == AppState::Running)
    set_app_state(app, AppState::Unhealthy, "proxy lost with node " + node);
  return true;
}

}  // namespace vramsim
