#include "models/placement.hpp"

#include <algorithm>

#include "models/registry.hpp"

namespace vramsim {

NodeFree node_free(const Node& n) {
  NodeFree f;
  f.cpus = n.available.get_amount(kCPUId);
  f.model = n.spec.accelerator_type;
  for (const auto& d : n.devices()) f.gpu_free.push_back(std::clamp<Amount>(d.free_fraction(), 0, kAmountScale));
  return f;
}

NodeFree node_free_after(const Node& n, const Placement& p) {
  NodeFree f = node_free(n);
  f.cpus -= p.booked.get_amount(kCPUId);
  for (auto [dev, frac] : p.device_fractions) f.gpu_free[static_cast<std::size_t>(dev)] -= frac;
  return f;
}

namespace {

// The engine's own choice: the first node that fits, on its device with the
// least free share that holds the request (the lowest index on ties).
class RayPlacement final : public PlacementPolicy {
 public:
  std::size_t choose(const ResourceSet&, const std::vector<PlacementOption>& options,
                     const std::vector<TaskShape>&) const override {
    const Node* first = options[0].node;
    std::size_t best = 0;
    for (std::size_t i = 1; i < options.size() && options[i].node == first; ++i) {
      const auto& a = options[i].placement.devices;
      const auto& b = options[best].placement.devices;
      if (a.size() == 1 && b.size() == 1 &&
          first->devices()[a[0]].free_fraction() < first->devices()[b[0]].free_fraction())
        best = i;
    }
    return best;
  }
};

}  // namespace

void register_placement_policies(PolicyRegistry& r) { r.add<PlacementPolicy, RayPlacement>(PlacementPolicy::kDefault); }

}  // namespace vramsim
