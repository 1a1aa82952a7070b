#pragma once
// GPU fragmentation and utilisation over a run. Fragmentation is the FGD
// paper's measure (Weng et al., "Beware of Fragmentation", ATC '23): the
// expected GPU capacity that a typical task of the workload could not be
// given, from each node's free CPU and per-GPU free shares. The definition,
// case by case, is in docs/workloads-openb.md.
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "engine/cluster_state.hpp"
#include "engine/resources.hpp"

namespace vramsim {

// One kind of task and how often it occurs in the workload.
struct TaskShape {
  Amount cpus = 0;  // per task
  Amount gpus = 0;  // below kAmountScale: a share of one GPU; else whole GPUs
  double weight = 1;
};

// A node as fragmentation sees it: free CPU and each GPU's free share.
struct NodeFree {
  Amount cpus = 0;
  std::vector<Amount> gpu_free;  // per device, in [0, kAmountScale]
  bool operator==(const NodeFree& o) const = default;
};
struct NodeFreeHash {
  std::size_t operator()(const NodeFree& n) const;
};

// GPUs (in kAmountScale units) of `n` that task `t` cannot use.
Amount unallocatable_gpu(const NodeFree& n, const TaskShape& t);
// The same averaged over the tasks by weight; 0 without tasks.
double expected_unallocatable_gpu(const NodeFree& n, const std::vector<TaskShape>& tasks);
// Tasks with equal requests merged, weights summed, in request order.
std::vector<TaskShape> merge_shapes(const std::vector<TaskShape>& tasks);

// Samples the cluster at chosen times; evaluated once the run ended (the
// workload's task mix is known only then).
class UtilisationSampler {
 public:
  void sample(const ClusterState& cluster);
  struct Result {
    std::size_t samples = 0;
    double gpus = 0;                 // GPUs of the alive nodes, last sample
    double gpu_fragmentation = 0;    // mean unallocatable GPUs
    double gpu_fragmentation_share = 0;  // the same / GPUs
    double gpu_allocation = 0;       // mean share of GPU capacity booked
    double vram_utilisation = 0;     // mean VRAM booked / VRAM total
  };
  Result evaluate(const std::vector<TaskShape>& tasks) const;

 private:
  struct Sample {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> states;  // state index, node count
    double gpus = 0, booked_gpus = 0, vram_total = 0, vram_booked = 0;
  };
  std::unordered_map<NodeFree, std::uint32_t, NodeFreeHash> state_index_;  // distinct node states seen
  std::vector<const NodeFree*> states_;
  std::vector<Sample> samples_;
};

}  // namespace vramsim
