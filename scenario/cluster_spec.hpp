#pragma once
// The simulated SLURM partition a scenario describes (`cluster`): its node
// types, how it hands out nodes, a background load, and the latencies of its
// steps (docs/scenario-format.md). The scenario format owns these; the
// simulated backend (backends/sim) runs them.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/time.hpp"
#include "models/latency.hpp"
#include "models/worker_defaults.hpp"

namespace vramsim {

struct PartitionNodeType {
  int count = 1;
  int cpus = 8;
  std::int64_t memory_gb = 128;
  int gpus = 1;
  std::string gpu_model = "NVIDIA A100-SXM4-40GB";
  std::string gpu_name = "A100-SXM4-40GB";  // the scenario's short name (prices, GPU-hours by model)
  std::string accelerator_type = "A100";
  std::int64_t gpu_memory_mb = 40960;  // nvidia-smi memory.total per GPU
  std::int64_t cuda_total_mb = 40440;  // what CUDA can give of it (the GPU table)
  bool nvidia_smi_present = true;
  bool nvidia_smi_fails = false;
  bool mig_enabled = false;
  // Custom resources a worker on this node advertises besides its own, only
  // with GPUs (an openb node: accelerator_type:<models> for each gpu_spec
  // its GPU model satisfies, docs/workloads-openb.md).
  std::map<std::string, double> gpu_labels;
};

// How the partition hands out its nodes.
//  Exclusive: a worker job takes a whole node; the queue is FCFS and its wait
//    is the drawn `queue_wait` plus waiting for a free node (no other load).
//  Fcfs, Easy: SLURM's consumable resources (cores, memory, GPUs as gres)
//    under strict FCFS or EASY backfilling (NodeScheduler), shared with the
//    background jobs; a worker job's wait is the drawn `queue_wait` (the
//    scheduler's own latency) and then whatever the load makes it wait.
enum class PartitionScheduling { Exclusive, Fcfs, Easy };

// A background batch job from a trace: it competes with the worker jobs for
// the partition and is otherwise invisible to the control plane.
struct BackgroundJob {
  std::int64_t id = 0;             // the trace's job id
  SimTime submit = 0;
  std::int64_t nodes = 1;
  std::int64_t cpus_per_node = 1;
  std::int64_t gpus_per_node = 0;  // booked as a worker job's GPUs are
  Duration run_time = 0;           // once started
  Duration estimate = 0;           // the user's request: EASY reservations
  std::optional<Duration> time_limit;  // killed (TIMEOUT) past it
};

// What the background load did by the end of the run.
struct BackgroundStats {
  std::size_t jobs = 0, started = 0, completed = 0, timed_out = 0;
  double wait_s = 0;               // summed over the started jobs
  double busy_cpu_s = 0;           // cores x seconds run, up to the end
  double held_gpu_s = 0;           // GPUs x seconds held, up to the end
};

struct SimSlurmConfig {
  std::vector<PartitionNodeType> nodes;
  PartitionScheduling scheduling = PartitionScheduling::Exclusive;
  std::vector<BackgroundJob> background;  // by submit time; needs Fcfs or Easy
  LatencyModel queue_wait = LatencyModel::fixed(5 * kSecond);
  LatencyModel node_boot = LatencyModel::fixed(20 * kSecond);
  LatencyModel registration = LatencyModel::fixed(5 * kSecond);
  LatencyModel ray_stop = LatencyModel::fixed(5 * kSecond);       // stop -> node leaves
  LatencyModel cancel_latency = LatencyModel::fixed(1 * kSecond); // scancel -> job leaves squeue
  // After the node left, how long the batch script still runs before the
  // job completes on its own; none (the default): it never does, the job
  // runs until scancel or its time limit. BioEngine's script runs
  // `ray start --block` last, and that loop exits only when a Ray process
  // dies with an unexpected code; `ray stop` ends them with SIGTERM, which it
  // counts as expected (python/ray/scripts/scripts.py:1286-1323@5866967ffd).
  std::optional<LatencyModel> job_exit_after_stop;
  LatencyModel call = LatencyModel::fixed(1 * kSecond);  // a replica answers a call
  std::string ip_prefix = "10.0.0.";
};

// Whether a node of this type can ever run a job of that size.
inline bool node_type_fits(const PartitionNodeType& t, const WorkerJobSize& size) {
  return t.gpus >= size.gpus && t.cpus >= size.cpus &&
         t.memory_gb >= static_cast<std::int64_t>(size.mem_per_cpu_gb) * size.cpus;
}

}  // namespace vramsim
