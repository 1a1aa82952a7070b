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

}  // namespace vramsim
