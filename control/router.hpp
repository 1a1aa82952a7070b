#pragma once
// The router: sends a call to an app to one of its replicas and traces the
// answer (call_sent, call_result, or call_failed when the app has no RUNNING
// replica on a live node). Today's rule is the first RUNNING replica, one
// call at a time with no queue, the behaviour the golden traces pin.
//
// The serving router lands here: request queues per replica, the choice
// among replicas by their queue lengths, and the per-replica load the
// replica autoscaler reads (see control_plane.hpp). It reads the apps
// manager's records and never changes them.
#include <cstdint>
#include <map>
#include <string>

#include "control/app_record.hpp"
#include "control/control_context.hpp"

namespace vramsim {

class Router {
 public:
  Router(ControlContext& ctx, const std::map<std::string, AppRecord>& apps) : ctx_(ctx), apps_(apps) {}

  void call(const std::string& app_id, const Json& payload);

 private:
  ControlContext& ctx_;
  const std::map<std::string, AppRecord>& apps_;
  std::uint64_t calls_ = 0;
};

}  // namespace vramsim
