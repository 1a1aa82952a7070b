// first-fit: the first node in registration order that fits, on its lowest
// device that holds the request.
#include "models/placement.hpp"
#include "models/registry.hpp"

namespace vramsim {

namespace {
class FirstFitPlacement final : public PlacementPolicy {
 public:
  std::size_t choose(const ResourceSet&, const std::vector<PlacementOption>&,
                     const std::vector<TaskShape>&) const override {
    return 0;
  }
};
}  // namespace

void register_placement_first_fit_policies(PolicyRegistry& r) { r.add<PlacementPolicy, FirstFitPlacement>("first-fit"); }

}  // namespace vramsim
