#pragma once
// The GPU memory the status shows, as BioEngine's replicas push it: each GPU
// replica's health check reads its device's used bytes (cuMemGetInfo,
// device-wide) and pushes them to the proxy, which keeps one value per node,
// the last write (bioengine/_app/mixin.py:287-337, cluster/proxy_actor.py:
// 476-490 @1725d5c). Ray Serve runs the first check before the replica is
// RUNNING and then one per health_check_period_s (replica.py:1775-1778,
// deployment_state.py:1527-1529 @5866967ffd): modelled as a push at RUNNING
// and one each period after, the period's mean (Ray draws each in 0.9-1.1 x).
//
// The pushes are settled lazily: between two changes of a node's running GPU
// replicas every device's use is constant, so the last push before a time is
// a closed form; a node is settled before each change and before a read.
// What a device uses: the declared observed size of each RUNNING replica on
// it, or a backend's own reading of that device where it measures one (live
// node agents).
#include <map>
#include <set>

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
  // The app's replicas' observed size is about to change (a fresh sizing):
  // their pushes up to now are settled at the old size.
  void resizing(const AppRecord& app);
  // Every node's pushes up to now, into the cluster state (before a status
  // read).
  void settle();
  // The periodic pass: a backend's device readings, then settle().
  void sample();

 private:
  struct Reporter {
    const AppRecord* app = nullptr;
    std::size_t index = 0;
    SimTime since = 0;  // RUNNING since: its first push
  };
  const ReplicaRecord& record(const Reporter& r) const { return r.app->replicas[r.index]; }
  void settle(const NodeId& node, SimTime now);
  std::int64_t device_used_bytes(const NodeId& node, int device) const;

  ControlContext& ctx_;
  std::map<DemandId, Reporter> running_;             // RUNNING replicas bound to a device
  std::map<NodeId, std::set<DemandId>> on_node_;     // node -> those replicas
};

}  // namespace vramsim
