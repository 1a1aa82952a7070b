#pragma once
// Placement: which node (and which GPU on it) a replica goes to, among every
// way its request fits now. The engine lists the options (ClusterState::
// placement_options: nodes in registration order, per node one option per
// distinct free share that holds a GPU share, lowest device first); a
// variant returns the index of its choice. Pure: nothing but the request,
// the options and the workload's typical tasks (TaskShape) is read.
//
// Variants: `ray` (the default, and the engine's own path without a chooser:
// the first node that fits, on the device with the least free that holds the
// share), `first-fit` (the first option: the first node, its lowest device),
// `best-fit` (the FGD paper's: the least CPU and GPU left free on the node
// after placing, each over a fixed maximum, weighed half and half),
// `best-fit-gpu` (the least GPU, then CPU, left free on the node), `fgd` (fragmentation gradient descent: the least growth of the node's
// expected unallocatable GPU against the typical tasks).
#include <cstddef>
#include <vector>

#include "engine/cluster_state.hpp"
#include "models/fragmentation.hpp"

namespace vramsim {

class PlacementPolicy {
 public:
  static constexpr const char* kModel = "placement";
  static constexpr const char* kDefault = "ray";
  virtual ~PlacementPolicy() = default;
  // `options` is never empty.
  virtual std::size_t choose(const ResourceSet& request, const std::vector<PlacementOption>& options,
                             const std::vector<TaskShape>& typical) const = 0;
};

// The node's free CPU, per-device free shares and GPU model now, and after `p`.
NodeFree node_free(const Node& n);
NodeFree node_free_after(const Node& n, const Placement& p);
// The index of the smallest key; the first on ties.
template <class Key>
std::size_t argmin(const std::vector<PlacementOption>& options, Key&& key) {
  std::size_t best = 0;
  auto best_key = key(options[0]);
  for (std::size_t i = 1; i < options.size(); ++i) {
    auto k = key(options[i]);
    if (k < best_key) {
      best = i;
      best_key = k;
    }
  }
  return best;
}

}  // namespace vramsim
