#include "models/pending.hpp"

#include "models/registry.hpp"

namespace vramsim {

namespace {

// ProxyActor._get_pending_actors as both legacy and fixed BioEngine have it
// (proxy_actor.py:251-290@1725d5c, unchanged by the fix): every actor in
// PENDING_CREATION, placed or not.
class CountsInstalling final : public PendingPolicy {
 public:
  RequestList actors(const PendingQueue& waiting, const PendingQueue& in_creation) const override {
    return RequestList::view(waiting, &in_creation);
  }
};

}  // namespace

void register_pending_policies(PolicyRegistry& r) { r.add<PendingPolicy, CountsInstalling>(PendingPolicy::kDefault); }

}  // namespace vramsim
