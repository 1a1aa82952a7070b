#pragma once
// The cluster backend the control plane acts on: submit a worker job, cancel
// jobs, list jobs, stop a node; and the callbacks "node registered (with its
// advertised resources)" and "node lost". Implemented by the simulated SLURM
// partition (backends/sim) and, in live mode, by sbatch/squeue/scancel.
#include <optional>
#include <string>
#include <vector>

#include "engine/cluster_state.hpp"
#include "engine/lifecycle.hpp"
#include "models/worker_defaults.hpp"

namespace vramsim {

struct JobInfo {
  std::string id;
  std::string name;  // "ray_worker"
  JobState state = JobState::Pending;
};

class BackendListener {
 public:
  virtual ~BackendListener() = default;
  virtual void node_registered(NodeSpec spec) = 0;
  virtual void node_lost(const std::string& job_id, const std::string& reason) = 0;
};

class ClusterBackend {
 public:
  virtual ~ClusterBackend() = default;
  // sbatch. Returns the job id, or nullopt (with `error`) when submission fails.
  virtual std::optional<std::string> submit_worker(const WorkerJobSize& size, std::string* error) = 0;
  // scancel of the given ids; ids no longer queued are ignored.
  virtual void cancel_jobs(const std::vector<std::string>& job_ids) = 0;
  // squeue: the worker jobs still in the queue (pending, running, completing).
  virtual std::vector<JobInfo> list_jobs() const = 0;
  // "ray stop" on the node that runs this job; the node then leaves.
  virtual void stop_node(const std::string& job_id) = 0;
  void set_listener(BackendListener* l) { listener_ = l; }

 protected:
  BackendListener* listener_ = nullptr;
};

}  // namespace vramsim
