#pragma once
// The device memory the node agents report: which replicas are RUNNING on
// which device, and the periodic sample that turns them into each device's
// driver-observed bytes (the declared observed peak of each running replica),
// overridden by a backend's own measurement where it has one (live agents).
// The apps manager reports replicas starting to run and stopping; the
// workers monitor runs the sample. A sample reads only the devices whose
// replicas changed since the last one: O(changed devices x replicas there).
#include <map>
#include <set>
#include <utility>

#include "control/app_record.hpp"
#include "control/control_context.hpp"

namespace vramsim {

class ReplicaMemory {
 public:
  explicit ReplicaMemory(ControlContext& ctx) : ctx_(ctx) {}

  // The replica app.replicas[index] (its demand) is RUNNING now. Records of
  // the apps manager never move, so the reference stays valid.
  void running(const AppRecord& app, DemandId demand, std::size_t index);
  void stopped(DemandId demand);
  // The app's replicas' observed size may differ (a fresh sizing).
  void changed(const AppRecord& app);
  // The node agents' report, into the cluster state at now.
  void sample();

 private:
  struct RunningRef {
    const AppRecord* app = nullptr;
    std::size_t index = 0;
  };
  using DeviceKey = std::pair<NodeId, int>;

  ControlContext& ctx_;
  std::map<DemandId, RunningRef> running_;
  std::map<DeviceKey, std::set<DemandId>> running_on_;  // device -> its RUNNING replicas
  std::set<DeviceKey> dirty_;                           // devices to read at the next sample
};

}  // namespace vramsim
