#pragma once
// The apps manager (BioEngine's `bioengine/apps/manager.py` with the
// builder's sizing): deploys serialised by one lock, each submitting its
// introspection task and then, at the resource check, sizing the app's GPU
// request and asking the admission model; admitted apps get their replicas as
// actor demands, which it places, starts (runtime env, init) and tracks
// through the replica lifecycle, resubmitting those of a lost node. Stops and
// deletes withdraw them. Calls to an app go through the Router. The replica
// side is in apps_manager_replicas.cpp.
//
// Cost: a deploy is O(replicas); placing is the scheduler's pass; a lost
// node's replicas O(their count). Nothing here walks every node but the GPU
// view, cached until nodes join or leave.
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "control/app_record.hpp"
#include "control/control_context.hpp"
#include "control/replica_memory.hpp"

namespace vramsim {

class AppsManager {
 public:
  AppsManager(ControlContext& ctx, ReplicaMemory& memory);

  void deploy(const AppSpec& app);              // queued behind the deploy lock
  void stop_app(const std::string& app_id);
  void delete_app(const std::string& app_id);

  // Places what the scheduler can place now (after a node joined, a task
  // ended or demand was withdrawn).
  void place_pending();
  // A node left holding these demands: its replicas go back to pending, and
  // an app that was RUNNING turns UNHEALTHY.
  void node_lost(const NodeId& node, const std::vector<Demand>& lost);
  // A worker's node registered: the Ray dashboard's node summary, which
  // get_gpu_memory_sizing reads, lists it only from its first report,
  // `dashboard_first_report` later.
  void node_registered(const NodeId& node);
  // Shutdown's part: queued deploys and the one in introspection are
  // cancelled, every app is undeployed, introspection tasks are withdrawn.
  void undeploy_all();

  // How the resource check counts worker jobs (get_num_worker_jobs, the
  // workers monitor's); without it, every job squeue lists.
  void count_worker_jobs_with(std::function<int()> count) { worker_jobs_ = std::move(count); }
  // Where the resource check finds the nodes it scans: the last monitor
  // pass's status (the workers monitor's); without it, the registered nodes
  // now.
  void scan_status_nodes_with(std::function<const StatusNodes*()> nodes) { status_nodes_ = std::move(nodes); }

  // BioEngine's AppsManager.monitor_applications, the last step of each
  // monitor pass (manager.py:1299-1470@fba5ffe): each tracked app with
  // auto_redeploy that is DEPLOY_FAILED or UNHEALTHY is deployed again from
  // its admitted build, without a new resource check (_fire_redeploy,
  // :1473-1489): at the first sighting, then once 10, 20, 40, ... s (at most
  // 600 s) have passed since the last attempt; RUNNING clears the backoff;
  // one still deploying is skipped.
  void monitor_applications();

  // Sets a serving app's replica count (the replica autoscaler's decision):
  // new replicas go out as actor demands; the ones removed are those not yet
  // placed, then starting, then running, newest first. False when the app
  // is not admitted and live.
  bool scale_replicas(const std::string& app_id, int target, const std::string& reason);
  // Replicas not stopped: what the target counts.
  static int live_replicas(const AppRecord& app);

  // Serving's view of the replica lifecycle (the router's).
  std::function<void(const AppRecord&, std::size_t)> on_replica_running;
  std::function<void(const AppRecord&, std::size_t, bool lost)> on_replica_gone;

  const std::map<std::string, AppRecord>& apps() const { return apps_; }
  const AppRecord* app(const std::string& id) const;

 private:
  void next_deploy();
  void check_deploy(const std::string& app_id);
  // Admission passed: the app's replicas go out as actor demands.
  void submit_replicas(AppRecord& app, const std::string& reason);
  void introspection_env_ready(DemandId task);
  void introspection_placed(const std::string& app_id, DemandId task);
  // AppBuilder.submit's task: pending while its worker process starts, then
  // running; the replicas are submitted as it ends.
  void submit_task(AppRecord& app, const std::string& reason);
  void submit_task_placed(DemandId task);
  void withdraw_submit_task(const std::string& app_id);
  // The ProxyDeployment replica (apps_manager_proxy.cpp): submitted with
  // the replicas, placed like them, running once its env is installed.
  static bool has_proxy(const AppSpec& spec);
  void submit_proxy(AppRecord& app);
  void proxy_placed(AppRecord& app, const Placement& p);
  static bool proxy_running(const AppRecord& app);
  void withdraw_proxy(AppRecord& app);
  bool proxy_lost(DemandId demand, const NodeId& node);  // false: not a proxy
  ClusterGpuView gpu_view() const;
  AdmissionSnapshot admission_snapshot() const;
  void replica_placed(AppRecord& app, ReplicaRecord& r, const Placement& p);
  void replica_started(DemandId demand, const std::string& app_id, const NodeId& node, const ReplicaStart& launch);
  // Ray Serve's handling of a replica whose constructor failed: the replica
  // stops, a replacement is submitted, and past the retry limit with no
  // replica ever started the deployment fails.
  void replica_failed(AppRecord& app, std::size_t index, const ReplicaFailure& f);
  // MAX_DEPLOYMENT_CONSTRUCTOR_RETRY_COUNT and MAX_PER_REPLICA_RETRY_COUNT
  // (Ray Serve's constants.py).
  static constexpr int kMaxConstructorRetries = 20;
  static constexpr int kRetriesPerReplica = 3;
  static constexpr Duration kControlLoop = 100 * kMillisecond;  // Ray Serve's CONTROL_LOOP_INTERVAL_S
  void update_app_state(AppRecord& app, const std::string& reason);
  void set_app_state(AppRecord& app, AppState s, const std::string& reason);
  void resubmit_replica(AppRecord& app, ReplicaRecord& r);
  // Withdraws every replica's demand (pending or placed) and marks it stopped.
  void withdraw_replicas(AppRecord& app);
  void withdraw_replica(AppRecord& app, std::size_t index);
  void add_replica(AppRecord& app);

  ControlContext& ctx_;
  Executor& exec_;
  ClusterBackend& backend_;
  ClusterState& cluster_;
  TraceRecorder& trace_;
  const ControlConfig& cfg_;
  ReplicaMemory& memory_;

  std::function<int()> worker_jobs_;
  std::function<const StatusNodes*()> status_nodes_;
  std::map<std::string, AppRecord> apps_;  // never erased from: records never move
  std::deque<std::string> deploy_queue_;
  bool deploy_lock_ = false;
  std::string deploy_checking_;    // the deploy holding the lock, until its resource check
  bool introspection_env_built_ = false;  // the baseline env exists (Ray caches it)
  std::map<DemandId, std::pair<std::string, std::size_t>> replica_of_;  // demand -> (app, index)
  // (node, app) -> when that node's runtime env for the app exists; replicas
  // placed there before then wait for the same install.
  std::map<std::pair<NodeId, std::string>, SimTime> runtime_env_ready_at_;
  std::map<DemandId, std::string> introspection_of_;  // task -> app
  std::map<DemandId, std::pair<std::string, std::string>> submit_of_;  // task -> (app, reason)
  std::map<DemandId, std::string> proxy_of_;  // proxy demand -> app
  std::map<NodeId, SimTime> proxy_env_ready_at_;  // when a node's proxy env exists
  // gpu_view() reads only what nodes joining or leaving change.
  mutable std::optional<std::pair<std::uint64_t, ClusterGpuView>> gpu_view_cache_;
  // Nodes registered whose first dashboard report has not landed yet.
  std::set<NodeId> dashboard_unreported_;
};

}  // namespace vramsim
