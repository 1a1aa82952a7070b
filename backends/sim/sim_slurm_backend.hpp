#pragma once
// A simulated SLURM partition: worker jobs queue (FCFS over the partition's
// nodes), start, boot a node, run the sbatch script's advertisement step on
// the node's GPU facts, and register with the head. Jobs end CANCELLED
// (scancel), COMPLETED (the node was stopped) or TIMEOUT (time limit).
// Every transition is traced; every latency is a seeded draw.
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/cluster_backend.hpp"
#include "backends/sim/node_scheduler.hpp"
#include "scenario/cluster_spec.hpp"
#include "engine/executor.hpp"
#include "engine/lifecycle.hpp"
#include "engine/processor_sharing.hpp"
#include "engine/random.hpp"
#include "engine/trace.hpp"
#include "models/advertisement.hpp"
#include "models/latency.hpp"

namespace vramsim {

struct SimJob {
  std::string id;
  WorkerJobSize size;
  Lifecycle<JobState> life{JobState::Pending, &kJobTransitions};
  SimTime submitted = 0;
  std::optional<SimTime> started, ended;
  int host = -1;               // partition node index
  bool registered = false;
  bool eligible = false;       // its queue wait has elapsed
  TimerId pending_timer = 0;   // boot/registration/time-limit steps
  TimerId limit_timer = 0;
};

class SimSlurmBackend final : public ClusterBackend {
 public:
  SimSlurmBackend(Executor& exec, RandomStreams& rng, TraceRecorder& trace, SimSlurmConfig cfg,
                  std::shared_ptr<const AdvertisementPolicy> advertisement);

  void submit_worker(const WorkerJobSize& size, SubmitDone done) override;
  void cancel_jobs(const std::vector<std::string>& job_ids) override;
  std::vector<JobInfo> list_jobs() const override;
  std::size_t job_count() const override { return active_count_; }
  std::vector<std::string> still_listed(const std::vector<std::string>& job_ids) const override;
  void stop_node(const std::string& job_id) override;
  void call_replica(const std::string& job_id, const std::string& replica, const Json& payload,
                    CallDone done) override;
  // A replica's requests share its device with the other replicas on it,
  // and the replica among themselves, by processor sharing on the virtual
  // clock (engine/processor_sharing). A replica without a device (a CPU
  // app) has one of its own. A node's replicas and their requests go with it.
  std::optional<ReplicaFailure> construct_replica(const ReplicaStart& r) override;
  void stop_replica(const std::string& job_id, const std::string& replica) override;
  std::uint32_t serving_replica(const std::string& job_id, const std::string& replica, int device,
                                const SpeedCurve& device_sharing, const SpeedCurve& replica_concurrency) override;
  ServeId serve_request(std::uint32_t replica, double work_us, ServeDone done) override {
    return shared_.start(replica, work_us, std::move(done));
  }
  void cancel_request(ServeId id) override { shared_.cancel(id); }
  std::optional<SharedDevices::Peaks> serving_peaks(std::uint32_t replica) const override {
    return shared_.peaks(replica);
  }
  // The partition node a job ran on (nullptr: never started).
  const PartitionNodeType* host_type(const SimJob& job) const {
    return job.host >= 0 ? hosts_[static_cast<std::size_t>(job.host)].type : nullptr;
  }

  // Starts a job already running and registered at t=0 (a warm cluster).
  std::string start_warm_worker(const WorkerJobSize& size);
  // Every job this backend created, in creation order (ascending ids).
  const std::deque<SimJob>& jobs() const { return jobs_; }
  const SimSlurmConfig& config() const { return cfg_; }
  // The background load so far; busy_cpu_s and held_gpu_s count running
  // jobs up to `now`.
  BackgroundStats background_stats(SimTime now) const;

 private:
  struct Host {
    const PartitionNodeType* type;  // into cfg_.nodes, which never changes
    std::string ip;
  };
  std::optional<std::string> submit(const WorkerJobSize& size, std::string* error);
  void schedule();
  SimJob& create_job(const WorkerJobSize& size, Duration queue_wait, bool warm);
  int first_free_host(const WorkerJobSize& size) const;  // lowest index; -1 if none
  void start(SimJob& job, int host);
  void boot_done(const std::string& id, bool warm = false);
  void register_node(const std::string& id, const Advertisement& ad);
  void end(SimJob& job, JobState final_state, const std::string& reason);
  NodeGpuFacts facts_for(const SimJob& job) const;
  // The shared partition (Fcfs, Easy): time moves in step with the executor.
  void partition_submit(SimJob& job);
  void partition_sync();    // the scheduler's clock to now
  void partition_settle();  // runs the pass at now, then sleeps until its next event
  void partition_wake();

  Executor& exec_;
  RandomStreams& rng_;
  TraceRecorder& trace_;
  SimSlurmConfig cfg_;
  std::shared_ptr<const AdvertisementPolicy> advertisement_;
  std::vector<Host> hosts_;
  // Hosts without a job: bit h of word h / 64. A start or an end flips one
  // bit, and the search for the lowest free host starts at the first word
  // that may hold one, so neither walks a tree as big as the partition.
  std::vector<std::uint64_t> free_hosts_;
  std::size_t first_free_word_ = 0;  // no free host below this word
  void set_free(int host, bool free);
  // The ids this backend hands out are numbers from kFirstJobId up, and
  // jobs_ holds them in that order (a deque: never erased, so a job's
  // address is stable): a lookup is an index, not a walk of a table keyed by
  // string whose misses grow with the job count.
  static constexpr long kFirstJobId = 1000;
  std::deque<SimJob> jobs_;
  SimJob* find_job(const std::string& id) const;
  SimJob& job_at(const std::string& id) const {
    SimJob* j = find_job(id);
    if (!j) throw std::out_of_range("no job " + id);
    return *j;
  }
  // The jobs not yet terminal, in creation order (squeue's listing): the
  // numbers of jobs_ entries, with jobs that ended since the last compaction
  // skipped when read, so an end costs O(1) amortised.
  std::vector<std::size_t> active_;
  std::size_t active_count_ = 0;
  std::size_t ended_in_active_ = 0;
  void compact_active();
  // The exclusive partition's queue, in submit order: jobs that ended while
  // pending leave it when they reach its head, so an end costs O(1).
  std::deque<SimJob*> queue_;
  long next_id_ = kFirstJobId;
  std::unique_ptr<NodeScheduler> partition_;  // Fcfs, Easy
  std::size_t next_background_ = 0;          // cfg_.background index
  TimerId wake_timer_ = 0;
  SimTime wake_at_ = 0;
  BackgroundStats bg_;
  // Serving: the devices of each job's node, and the replicas on them.
  SharedDevices shared_{exec_};
  struct JobServing {
    std::vector<std::optional<SharedDevices::DeviceId>> devices;  // by index on the node
    std::vector<SharedDevices::ReplicaId> replicas;
    // Device memory the constructed replicas hold, by device index, and
    // each one's share by label.
    std::map<int, std::int64_t> held_mb;
    std::map<int, int> held_count;
    std::map<std::string, std::pair<int, std::int64_t>> constructed;
  };
  std::unordered_map<std::string, JobServing> serving_jobs_;
  void node_gone(const std::string& job_id, const std::string& reason);
  struct BackgroundRun {
    SimTime start = 0;
    std::int64_t cores = 0, gpus = 0;  // over all its nodes
  };
  static void add_background_use(const BackgroundRun& run, SimTime to, BackgroundStats& s);
  std::map<std::int64_t, BackgroundRun> bg_running_;  // by scheduler id
};

}  // namespace vramsim
