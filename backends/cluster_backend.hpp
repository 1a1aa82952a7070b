#pragma once
// The cluster backend the control plane acts on: submit a worker job, cancel
// jobs, list jobs (all, or which of a set are still queued), stop a node,
// start and stop replicas on a node and call them; and the callbacks "node
// registered (with its advertised resources)" and "node lost". Implemented
// by the simulated SLURM partition (backends/sim) and, in live mode, by
// sbatch/squeue/scancel plus the node agents (backends/slurm).
//
// Every operation that waits on the outside world answers through a
// callback: the simulated backend calls it before returning, the live one
// from its event loop later, so the control plane never blocks.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/cluster_state.hpp"
#include "engine/lifecycle.hpp"
#include "engine/trace.hpp"
#include "models/worker_defaults.hpp"

namespace vramsim {

struct JobInfo {
  std::string id;
  std::string name;  // "ray_worker"
  JobState state = JobState::Pending;
};

// One replica process to start on the node of `job_id`.
struct ReplicaStart {
  std::string job_id, app, replica;   // replica: "app#0"
  std::int64_t gpu_memory_mb = 0;     // VRAM the replica holds (0: none)
  int device = -1;                    // device index on the node, -1: none
  std::string kind = "plain";         // "plain" | "probe"
};

// What the driver observed on one device, and when.
struct DeviceObservation {
  std::int64_t used_bytes = 0;
  SimTime at = 0;
};

class BackendListener {
 public:
  virtual ~BackendListener() = default;
  virtual void node_registered(NodeSpec spec) = 0;
  virtual void node_lost(const std::string& job_id, const std::string& reason) = 0;
};

class ClusterBackend {
 public:
  using SubmitDone = std::function<void(std::optional<std::string> job_id, const std::string& error)>;
  using StartDone = std::function<void(bool ok, const std::string& error)>;
  using CallDone = std::function<void(Json result)>;

  virtual ~ClusterBackend() = default;
  // sbatch. `done` gets the job id, or nullopt and the error when submission fails.
  virtual void submit_worker(const WorkerJobSize& size, SubmitDone done) = 0;
  // scancel of the given ids; ids no longer queued are ignored.
  virtual void cancel_jobs(const std::vector<std::string>& job_ids) = 0;
  // squeue: the worker jobs still in the queue (pending, running, completing),
  // as last seen; jobs submitted since count at once.
  virtual std::vector<JobInfo> list_jobs() const = 0;
  // list_jobs().size(), without building the list (read at every tick).
  virtual std::size_t job_count() const { return list_jobs().size(); }
  // The given ids that list_jobs() holds, once each and in its order: one
  // squeue answering for a set of jobs (a cancel wait's poll). The default
  // filters list_jobs(); the backends answer from their job tables in
  // O(ids x log jobs), whatever the length of the queue.
  virtual std::vector<std::string> still_listed(const std::vector<std::string>& job_ids) const {
    const std::unordered_set<std::string> wanted(job_ids.begin(), job_ids.end());
    std::vector<std::string> out;
    for (auto& j : list_jobs())
      if (wanted.count(j.id)) out.push_back(std::move(j.id));
    return out;
  }
  // "ray stop" on the node that runs this job; the node then leaves.
  virtual void stop_node(const std::string& job_id) = 0;
  // The node starts the replica's process; `done` once it is up. The
  // simulated node starts it at once (env install and init are latencies
  // the control plane draws).
  virtual void start_replica(const ReplicaStart& r, StartDone done) { (void)r; done(true, ""); }
  virtual void stop_replica(const std::string& job_id, const std::string& replica) { (void)job_id; (void)replica; }
  // A request to a running replica; `done` gets its answer.
  virtual void call_replica(const std::string& job_id, const std::string& replica, const Json& payload,
                            CallDone done) = 0;
  // A serving request that keeps the replica busy for `service` (the work
  // the router drew); `done` when it answers. The default sends it as a call
  // whose payload asks the replica to sleep that long (a plain replica's
  // work in live mode) and takes any answer as the end.
  using ServeDone = std::function<void()>;
  virtual void serve_request(const std::string& job_id, const std::string& replica, Duration service,
                             ServeDone done) {
    call_replica(job_id, replica, Json{{"sleep_us", service}}, [done = std::move(done)](const Json&) { done(); });
  }
  // Driver-observed memory of a device of this job's node, where the backend
  // measures it (live agents); nullopt where it does not (simulation).
  virtual bool measures_memory() const { return false; }
  virtual std::optional<DeviceObservation> observed_memory(const std::string& job_id, int device) const {
    (void)job_id; (void)device;
    return std::nullopt;
  }
  void set_listener(BackendListener* l) { listener_ = l; }

 protected:
  BackendListener* listener_ = nullptr;
};

}  // namespace vramsim
