#include "models/pending.hpp"
#include "models/registry.hpp"

namespace vramsim {

namespace {

// The repair the TODO at proxy_actor.py:650@1725d5c asks for: an actor whose
// lease a node has granted (installing its runtime env, or in its
// constructor) already holds its resources there and is no demand for a new
// worker. Ray's own autoscaler counts it so: a granted lease waiting for its
// worker is not reported as pending demand (scheduler_resource_reporter.cc,
// gcs_autoscaler_state_manager.cc@caad3402).
class ExcludesInstalling final : public PendingPolicy {
 public:
  RequestList actors(const PendingQueue& waiting, const PendingQueue&) const override {
    return RequestList::view(waiting);
  }
};

}  // namespace

void register_pending_excludes_installing_policies(PolicyRegistry& r) {
  r.add<PendingPolicy, ExcludesInstalling>("excludes-installing");
}

}  // namespace vramsim
