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
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/cluster_state.hpp"
#include "engine/lifecycle.hpp"
#include "engine/processor_sharing.hpp"
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
  // Device memory the process will really hold once constructed: its
  // tensors plus its CUDA context (0: none, or not known).
  std::int64_t observed_mb = 0;
};

// A replica constructor that failed on its device.
struct ReplicaFailure {
  std::string reason;                 // "CUDA out of memory"
  int device = -1;
  std::int64_t device_total_mb = 0;   // what CUDA can give on the device
  std::int64_t held_mb = 0;           // what the replicas constructed there hold
  std::int64_t needed_mb = 0;         // what this one needed
  int replicas_held = 0;              // how many hold it
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
  // The replica's constructor runs on its device, once its runtime env and
  // init are done: nullopt when it succeeds. The simulated device fails it
  // with CUDA out of memory when what its constructed replicas hold plus
  // this one's `observed_mb` exceeds what CUDA can give; a live replica
  // process reports its own failures (the default: it succeeds).
  virtual std::optional<ReplicaFailure> construct_replica(const ReplicaStart& r) {
    (void)r;
    return std::nullopt;
  }
  // A request to a running replica; `done` gets its answer.
  virtual void call_replica(const std::string& job_id, const std::string& replica, const Json& payload,
                            CallDone done) = 0;
  // Serving. A replica that starts taking requests is set up once
  // (`serving_replica`: where it runs, and how it shares its device, g, and
  // itself, h, among concurrent work); each request then names it by the
  // handle returned. `serve_request` starts `work_us` microseconds of solo
  // work on it and calls `done` when it answers; `cancel_request` ends one
  // early (a timeout), after which `done` is never called.
  // The default, the live world's: a call whose payload asks the replica to
  // sleep that long (a plain replica's work), any answer being the end; a
  // real device shares itself, so the curves are not applied, and a
  // cancelled request's answer is dropped when it comes.
  using ServeDone = std::function<void()>;
  using ServeId = std::uint64_t;  // 0: none
  virtual std::uint32_t serving_replica(const std::string& job_id, const std::string& replica, int device,
                                        const SpeedCurve& device_sharing, const SpeedCurve& replica_concurrency) {
    (void)device; (void)device_sharing; (void)replica_concurrency;
    serving_.push_back(ServingTarget{job_id, replica});
    return static_cast<std::uint32_t>(serving_.size() - 1);
  }
  virtual ServeId serve_request(std::uint32_t replica, double work_us, ServeDone done) {
    const ServeId id = ++next_serve_;
    const ServingTarget& t = serving_[replica];
    live_serves_.insert(id);
    call_replica(t.job_id, t.replica, Json{{"sleep_us", serve_sleep_us(work_us)}},
                 [this, id, done = std::move(done)](const Json&) {
                   if (live_serves_.erase(id)) done();
                 });
    return id;
  }
  virtual void cancel_request(ServeId id) { live_serves_.erase(id); }
  // Where the backend shares devices: the most replicas busy at once on the
  // replica's device, and the most requests it served at once.
  virtual std::optional<SharedDevices::Peaks> serving_peaks(std::uint32_t replica) const {
    (void)replica;
    return std::nullopt;
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
  // The sleep a plain replica is asked for, in microseconds of its clock.
  virtual std::int64_t serve_sleep_us(double work_us) const { return std::llround(work_us); }
  BackendListener* listener_ = nullptr;

 private:
  struct ServingTarget {
    std::string job_id, replica;
  };
  std::vector<ServingTarget> serving_;
  std::unordered_set<ServeId> live_serves_;
  ServeId next_serve_ = 0;
};

}  // namespace vramsim
