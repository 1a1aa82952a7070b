// best-fit as the FGD paper's simulator scores it (Weng et al., ATC '23; its
// BestFit score plugin): the node's CPU and GPU capacity left free after
// placing, each divided by a fixed maximum (128 cores, 8 GPUs) and weighed
// half and half; the least sum wins. Within a node, the device left with the
// least free share (the simulator's GPU-share allocator takes the tightest
// device); the first in node order on ties. Memory is not scored, as there.
// The simulator scales the sum to an integer in [0, 100] and the Kubernetes
// scheduler picks at random among equal scores; here the sum is kept exact
// and ties go to the first option, so runs stay deterministic.
#include <numeric>
#include <utility>

#include "models/placement.hpp"
#include "models/registry.hpp"

namespace vramsim {

namespace {
constexpr double kMaxCpus = 128, kMaxGpus = 8;  // the simulator's MaxSpecCpu, MaxSpecGpu

class BestFitPlacement final : public PlacementPolicy {
 public:
  std::size_t choose(const ResourceSet&, const std::vector<PlacementOption>& options,
                     const std::vector<TaskShape>&) const override {
    return argmin(options, [](const PlacementOption& o) {
      const NodeFree after = node_free_after(*o.node, o.placement);
      const Amount gpus = std::accumulate(after.gpu_free.begin(), after.gpu_free.end(), Amount{0});
      const double score = 0.5 * to_double(after.cpus) / kMaxCpus + 0.5 * to_double(gpus) / kMaxGpus;
      const Amount device =
          o.placement.devices.size() == 1 ? after.gpu_free[static_cast<std::size_t>(o.placement.devices[0])] : 0;
      return std::make_pair(score, device);
    });
  }
};
}  // namespace

void register_placement_best_fit_policies(PolicyRegistry& r) { r.add<PlacementPolicy, BestFitPlacement>("best-fit"); }

}  // namespace vramsim
