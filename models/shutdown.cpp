#include "models/shutdown.hpp"

#include "models/registry.hpp"

namespace vramsim {
namespace {

// legacy: with no registered node it returns at once, so queued and
// not-yet-joined jobs run on to their time limit. Graceful stops are started
// but not awaited, racing the final cancel.
class LegacyShutdown final : public ShutdownPolicy {
 public:
  ShutdownPlan plan(const ShutdownSnapshot& s) const override {
    ShutdownPlan p;
    if (s.registered.empty()) {
      p.return_early = true;
      p.note = "No active worker nodes found";
      return p;
    }
    p.drain = s.registered;
    p.cancel_remaining = true;
    return p;
  }
};

// fixed: drain, await every graceful stop, then always sweep.
class FixedShutdown final : public ShutdownPolicy {
 public:
  ShutdownPlan plan(const ShutdownSnapshot& s) const override {
    ShutdownPlan p;
    p.drain = s.registered;
    p.await_drain = true;
    p.cancel_remaining = true;
    return p;
  }
};

}  // namespace

void register_shutdown_policies(PolicyRegistry& r) {
  r.add<ShutdownPolicy, LegacyShutdown>("legacy");
  r.add<ShutdownPolicy, FixedShutdown>("fixed");
}

}  // namespace vramsim
