// best-fit-gpu: the option that leaves its node the least free GPU capacity,
// then its chosen device the least free share, then the node the least free
// CPU (the tightest GPU pack); the first in node order on ties. Not the FGD
// paper's BestFit, which weighs CPU and GPU together (best-fit).
#include <numeric>
#include <tuple>

#include "models/placement.hpp"
#include "models/registry.hpp"

namespace vramsim {

namespace {
class BestFitGpuPlacement final : public PlacementPolicy {
 public:
  std::size_t choose(const ResourceSet&, const std::vector<PlacementOption>& options,
                     const std::vector<TaskShape>&) const override {
    return argmin(options, [](const PlacementOption& o) {
      const NodeFree after = node_free_after(*o.node, o.placement);
      const Amount device = o.placement.devices.size() == 1 ? after.gpu_free[static_cast<std::size_t>(o.placement.devices[0])] : 0;
      return std::make_tuple(std::accumulate(after.gpu_free.begin(), after.gpu_free.end(), Amount{0}), device,
                             after.cpus);
    });
  }
};
}  // namespace

void register_placement_best_fit_gpu_policies(PolicyRegistry& r) {
  r.add<PlacementPolicy, BestFitGpuPlacement>("best-fit-gpu");
}

}  // namespace vramsim
