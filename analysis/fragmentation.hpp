#pragma once
// GPU fragmentation and utilisation over a run. Fragmentation is the FGD
// paper's measure (Weng et al., "Beware of Fragmentation", ATC '23): the
// expected GPU capacity that a typical task of the workload could not be
// given, from each node's free CPU and per-GPU free shares. The definition,
// case by case, is in docs/workloads-openb.md.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/cluster_state.hpp"
#include "engine/resources.hpp"
#include "models/fragmentation.hpp"

namespace vramsim {

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

// The cluster now, as the FGD paper counts it (`vramsim run --frag-csv`):
// its GPUs, the capacity booked, and the fragmentation against fixed typical
// tasks. Each distinct node state is measured once, however often it recurs.
struct ClusterFragmentation {
  double gpus = 0;        // GPUs of the alive GPU nodes
  double allocated = 0;   // GPU capacity booked, GPUs
  double fragmented = 0;  // the FGD measure summed over the nodes, GPUs
  std::size_t nodes_fragmented = 0;  // GPU nodes with any fragmentation
  double node_max = 0;    // the most fragmented node's figure, GPUs
  double unallocated() const { return gpus - allocated; }
};
struct NodeFragmentation {
  std::string node, model;  // node id, its accelerator type
  int gpus = 0;
  double allocated = 0, fragmented = 0, cpus_free = 0;
};
class FragmentationMeter {
 public:
  explicit FragmentationMeter(std::vector<TaskShape> typical)
      : tasks_(merge_shapes(typical)), by_model_(any_names_models(tasks_)) {}
  ClusterFragmentation measure(const ClusterState& cluster);
  std::vector<NodeFragmentation> per_node(const ClusterState& cluster);  // GPU nodes in registration order

 private:
  double node_fragmentation(const Node& n, double& allocated);  // GPUs
  std::vector<TaskShape> tasks_;
  bool by_model_ = false;  // a task names GPU models: the node's model counts
  std::unordered_map<NodeFree, double, NodeFreeHash> memo_;
  NodeFree key_;
};

}  // namespace vramsim
