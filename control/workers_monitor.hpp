#pragma once
// The SLURM workers monitor (BioEngine's `bioengine/cluster/slurm_workers.py`,
// SlurmWorkers): the monitor loop, whose pass samples each worker's usage
// into the status history and asks the autoscaler model to scale up (one
// worker job at a time, `_check_scale_up`, polled until its node registers
// or the job disappears) or down (idle workers stopped gracefully and their
// jobs cancelled, `_close_worker`, which sees a node leave only in the
// status the last pass took); nodes registering with the head and
// leaving it; and the periodic device-memory sample.
//
// Cost: a pass reads only the workers whose usage changed since the last
// one, plus the autoscaler model. A graceful stop costs O(log jobs) per
// poll: its cancel wait asks the backend about its own jobs only
// (ClusterBackend::still_listed), never for the whole listing, so N workers
// stopped at once cost O(N log N), not O(N^2).
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <optional>
#include <string>
#include <vector>

#include "control/control_context.hpp"
#include "control/replica_memory.hpp"
#include "engine/id_hash.hpp"
#include "models/admission.hpp"
#include "models/idle_history.hpp"

namespace vramsim {

class WorkersMonitor {
 public:
  // From a pass's start to the next pass's: its work, a raising pass's
  // backoff, then polls of `poll` until `tick` has passed since its start.
  static Duration next_pass_after(Duration work, Duration backoff, Duration tick, Duration poll);
  WorkersMonitor(ControlContext& ctx, ReplicaMemory& memory);

  void start();         // the monitor loop (SLURM mode) and the memory sampler
  void stop_loop();     // shutdown began: no further pass, so no scale-up while draining
  void stop_sampler();  // the process exited
  // A worker's node registered; false when the head is gone (the node is
  // traced unclaimed and does not join).
  bool register_node(NodeSpec spec);
  struct LostNode {
    NodeId node;
    std::vector<Demand> demands;  // what it held, for the apps manager
  };
  // The node of this job left; nullopt when no node has the job.
  std::optional<LostNode> remove_node(const std::string& job_id, const std::string& reason);
  // Shutdown: the worker creation task in flight is cancelled (not awaited).
  // `_add_worker`'s CancelledError handler then scancels its own job when
  // the event loop next turns, so only if the process still lives; a task
  // whose sbatch has not answered knows no job to cancel.
  void cancel_creation();
  // Whether the cluster status as the last monitor pass saw it lists the
  // node (see status_nodes_): what `close_all` reads as the workers.
  bool listed_in_status(const std::string& node_id) const;
  // The worker nodes of that status, with what each had free then: what the
  // admission check scans.
  const StatusNodes* status_nodes() const { return &status_nodes_; }
  // SlurmWorkers.get_num_worker_jobs: squeue's worker jobs minus the
  // deletions in progress (what the autoscaler and the admission check count).
  int worker_jobs() const;
  // Jobs listed now that no scancel of this process asked to leave: what a
  // process exiting now leaves behind.
  std::vector<std::string> jobs_not_cancelled() const;
  // Graceful stop: stop the node, wait for it to leave (or the grace period),
  // then cancel its job and wait for the job to leave squeue.
  void close_worker(const std::string& node_id, const std::string& job_id, std::function<void()> done);
  // scancel of the jobs still listed, then one squeue per poll for all of
  // them until none is listed or the grace period ends; `done` gets those
  // seen gone.
  void cancel_and_wait(std::vector<std::string> jobs, std::function<void(std::vector<std::string>)> done);
  // The pass's last step, whatever the steps before it did: the apps
  // manager's monitor_applications (worker.py:845-902@fba5ffe).
  std::function<void()> after_pass;
  // Right after the pass's status sample: RayCluster.monitor_cluster's
  // snapshot for get_status (ClusterStatus).
  std::function<void()> after_status_sample;

 private:
  void schedule_tick(Duration delay);
  // One pass: `RayCluster.monitor_cluster` (the status snapshot, then the
  // autoscaler's check_scaling), then, from the worker's loop only, the
  // apps manager's monitor_applications.
  void pass(bool from_worker_loop);
  void sample_status();  // the pass's sample into history_ and status_nodes_
  // SlurmWorkers.check_scaling: the autoscaler's decision over a snapshot,
  // carried out (SLURM mode only).
  void check_scaling();
  void scale_up(const ScaleDecision& d, SimTime now, int worker_jobs, const Json& installing);
  // The labels of the actors in creation the snapshot lists, when they alone
  // are its pending demand (the fifth defect, docs/models.md); else empty.
  Json installing_only(const AutoscalerSnapshot& s) const;
  void poll_creation(const std::string& job_id);
  void wait_node_gone(const std::string& node_id, const std::string& job_id, SimTime deadline,
                      std::function<void()> done);
  // The monitoring task's sleep after the Nth pass in a row that raised.
  static Duration error_backoff(int consecutive);

  ControlContext& ctx_;
  Executor& exec_;
  ClusterBackend& backend_;
  ClusterState& cluster_;
  TraceRecorder& trace_;
  const ControlConfig& cfg_;
  ReplicaMemory& memory_;

  TimerId monitor_timer_ = 0;
  Executor::Periodic sampler_;
  IdleHistory history_;
  std::optional<std::string> creation_job_;
  bool creation_submitting_ = false;  // sbatch not answered yet
  std::optional<SimTime> last_scale_up_;
  std::optional<SimTime> last_scale_down_check_;  // none: never, as the epoch is for the real loop
  std::unordered_map<std::string, std::string, IdHash> deletions_;  // node -> job being stopped (never iterated)
  // The cluster status is a snapshot each monitor pass takes
  // (`RayCluster.status`: the newest entry `monitor_cluster` appended): its
  // worker nodes, kept up to date at each pass for the nodes whose usage
  // changed. The admission check scans it, and the wait for a stopped node to
  // leave polls it, not the cluster: a node is in it when it registered
  // before the last pass and had not left by then. Once shutdown stops the
  // loop the snapshot is frozen, so each graceful stop waits its whole grace
  // period.
  StatusNodes status_nodes_;
  int consecutive_errors_ = 0;  // passes in a row that raised (autoscaler_error)
  std::unordered_set<std::string, IdHash> cancel_requested_;  // jobs this process has scancelled
};

}  // namespace vramsim
