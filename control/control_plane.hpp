#pragma once
// The serving control plane: the apps manager (deploy lock, introspection
// task, sizing, admission, replicas), the SLURM workers monitor (autoscaler
// tick, worker creation, graceful stops) and shutdown. It sees the world only
// through an Executor and a ClusterBackend, so the same code runs in
// simulation and against a real cluster; every decision is made by a policy
// model over a snapshot.
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/cluster_backend.hpp"
#include "engine/cluster_state.hpp"
#include "engine/executor.hpp"
#include "engine/lifecycle.hpp"
#include "engine/random.hpp"
#include "engine/trace.hpp"
#include "models/latency.hpp"
#include "models/policy_set.hpp"

namespace vramsim {

struct ControlConfig {
  bool slurm_mode = true;
  AutoscalerConfig autoscaler;
  Duration monitor_tick = 10 * kSecond;   // the monitor loop's sleep after each pass
  // Time one monitor pass takes before its sleep starts: passes begin every
  // monitor_tick + work, never on an exact multiple of the tick.
  LatencyModel monitor_work = LatencyModel::fixed(5 * kMillisecond);
  Duration creation_poll = 5 * kSecond;
  Duration introspection_duration = 15 * kSecond;  // the task's run time once placed on a node
  Duration introspection_check_after = 15 * kSecond;  // submission to the resource check
  ResourceSet introspection_request{{kCPU, 1.0}};
  Duration grace_period = 60 * kSecond;   // each graceful-stop step's limit
  Duration stop_poll = 3 * kSecond;
  Duration cancel_poll = 1 * kSecond;
  std::size_t status_history = 100;
  Duration memory_sample_period = 10 * kSecond;
  LatencyModel runtime_env_install = LatencyModel::fixed(0);
  LatencyModel replica_init = LatencyModel::fixed(0);
};

struct AppSpec {
  std::string id;
  std::optional<std::int64_t> gpu_memory_mb;
  bool disable_gpu = false;
  double cpus = 1;                  // per replica
  std::int64_t memory_bytes = 0;    // per replica
  int replicas = 1;
  std::optional<std::int64_t> observed_vram_mb;  // driver-observed peak per replica
  std::string kind = "plain";       // "probe": its replicas answer calls with the fp16 matmul probe
};

struct ReplicaRecord {
  DemandId demand = 0;
  Lifecycle<ReplicaState> life{ReplicaState::Pending, &kReplicaTransitions};
  NodeId node;
  int device = -1;
};

struct AppRecord {
  AppSpec spec;
  Lifecycle<AppState> life{AppState::NotStarted, &kAppTransitions};
  SimTime requested_at = 0;
  std::optional<SimTime> running_at;
  std::optional<bool> admitted;
  std::string admission_reason, message;
  SizingResult sizing;
  ResourceSet replica_request;
  std::vector<ReplicaRecord> replicas;
  bool deploy_cancelled = false;  // stopped while its deploy was queued or in introspection
};

class ControlPlane final : public BackendListener {
 public:
  ControlPlane(Executor& exec, ClusterBackend& backend, ClusterState& cluster, TraceRecorder& trace,
               RandomStreams& rng, PolicySet policies, ControlConfig cfg);

  void start();                                 // starts the monitor loop
  void deploy(const AppSpec& app);              // queued behind the deploy lock
  void stop_app(const std::string& app_id);
  void delete_app(const std::string& app_id);
  void shutdown(std::function<void()> done = {});
  // Sends a request to a running replica of the app; the answer is traced.
  void call_app(const std::string& app_id, const Json& payload);

  void node_registered(NodeSpec spec) override;
  void node_lost(const std::string& job_id, const std::string& reason) override;

  const std::map<std::string, AppRecord>& apps() const { return apps_; }
  const AppRecord* app(const std::string& id) const;
  bool shut_down() const { return exited_; }
  bool shutting_down() const { return shutting_down_; }
  std::optional<SimTime> shutdown_done_at() const { return shutdown_done_at_; }
  const ControlConfig& config() const { return cfg_; }
  const PolicySet& policies() const { return policies_; }

 private:
  // Apps manager.
  void next_deploy();
  void check_deploy(const std::string& app_id);
  void introspection_placed(const std::string& app_id, DemandId task);
  ClusterGpuView gpu_view() const;
  // gpu_view() reads only what nodes joining or leaving change.
  mutable std::optional<std::pair<std::uint64_t, ClusterGpuView>> gpu_view_cache_;
  AdmissionSnapshot admission_snapshot() const;
  void place_pending();
  void replica_placed(AppRecord& app, ReplicaRecord& r, const Placement& p);
  void replica_started(DemandId demand, const std::string& app_id, const NodeId& node);
  void update_app_state(AppRecord& app, const std::string& reason);
  void set_app_state(AppRecord& app, AppState s, const std::string& reason);
  void resubmit_replica(AppRecord& app, ReplicaRecord& r);
  // Withdraws every replica's demand (pending or placed) and marks it stopped.
  void withdraw_replicas(AppRecord& app);

  // SLURM workers monitor.
  void schedule_tick(Duration delay);
  void tick();
  void sample_status();  // the tick's sample into history_
  int worker_jobs() const;
  void poll_creation(const std::string& job_id);
  void close_worker(const std::string& node_id, const std::string& job_id, std::function<void()> done);
  void wait_node_gone(const std::string& node_id, const std::string& job_id, SimTime deadline,
                      std::function<void()> done);
  void cancel_and_wait(std::vector<std::string> jobs, std::function<void(std::vector<std::string>)> done);
  void sample_memory();

  Executor& exec_;
  ClusterBackend& backend_;
  ClusterState& cluster_;
  TraceRecorder& trace_;
  RandomStreams& rng_;
  PolicySet policies_;
  ControlConfig cfg_;

  std::map<std::string, AppRecord> apps_;
  std::deque<std::string> deploy_queue_;
  bool deploy_lock_ = false;
  std::string deploy_checking_;    // the deploy holding the lock, until its resource check
  TimerId deploy_check_timer_ = 0;
  std::map<DemandId, std::pair<std::string, std::size_t>> replica_of_;  // demand -> (app, index)
  // (node, app) -> when that node's runtime env for the app exists; replicas
  // placed there before then wait for the same install.
  std::map<std::pair<NodeId, std::string>, SimTime> runtime_env_ready_at_;
  std::map<DemandId, std::string> introspection_of_;  // task -> app
  // Replicas RUNNING, what the memory sampler reads. Records of apps_ never
  // move (a std::map that is never erased from).
  struct RunningRef {
    const AppRecord* app = nullptr;
    std::size_t index = 0;
  };
  using DeviceKey = std::pair<NodeId, int>;
  std::map<DemandId, RunningRef> running_;
  std::map<DeviceKey, std::set<DemandId>> running_on_;  // device -> its RUNNING replicas
  std::set<DeviceKey> memory_dirty_;                    // devices to read at the next sample
  void replica_running(AppRecord& app, DemandId demand, std::size_t index);
  void replica_stopped(DemandId demand);
  void memory_changed(const AppRecord& app);  // its replicas' observed size may differ

  TimerId monitor_timer_ = 0;
  Executor::Periodic sampler_;
  IdleHistory history_;
  std::optional<std::string> creation_job_;
  bool creation_submitting_ = false;  // sbatch not answered yet
  std::uint64_t calls_ = 0;
  std::optional<SimTime> last_scale_up_;
  std::optional<SimTime> last_scale_down_check_;  // none: never, as the epoch is for the real loop
  std::map<std::string, std::string> deletions_;  // node -> job being stopped
  bool shutting_down_ = false;  // shutdown began: no deploy, introspection or admission starts
  bool exited_ = false;
  std::optional<SimTime> shutdown_done_at_;
};

}  // namespace vramsim
