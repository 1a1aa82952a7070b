#pragma once
// GPU fragmentation as the FGD paper measures it (Weng et al., "Beware of
// Fragmentation", ATC '23): the GPU capacity of a node that a typical task
// of the workload could not be given, from the node's free CPU and per-GPU
// free shares. Pure functions: the utilisation sampler (analysis/) and the
// fgd placement policy use them. The cases: docs/workloads-openb.md.
#include <cstdint>
#include <vector>

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
// The workload's typical tasks: shapes merged, the most frequent first, kept
// until they make up `popularity` (in (0, 1]) of the weight; the paper's
// popularity threshold is 0.95. Ties keep request order.
std::vector<TaskShape> typical_tasks(const std::vector<TaskShape>& tasks, double popularity);

}  // namespace vramsim
