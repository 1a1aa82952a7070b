#pragma once
// RayCluster.status as BioEngine's get_status and CLI read it
// (ray_cluster.py:320-356@fba5ffe): the newest entry of
// cluster_status_history, which monitor_cluster appends at each monitor pass
// (:1159-1166), so a read sees the cluster as of the last pass, up to one
// pass (10 s + the pass's work, longer while passes back off) old. Building
// a snapshot costs O(nodes), so one is kept per pass only once a reader has
// asked (keep); without a pass to read (after the worker's process exited)
// a read sees the cluster as it is then.
#include <optional>

#include "control/control_context.hpp"
#include "control/replica_memory.hpp"
#include "models/status.hpp"

namespace vramsim {

class ClusterStatus {
 public:
  ClusterStatus(ControlContext& ctx, ReplicaMemory& memory) : ctx_(ctx), memory_(memory) {}

  // From the next pass on, each pass's snapshot is kept, built with `opts`.
  void keep(StatusOptions opts);
  // monitor_cluster's snapshot: the GPU memory pushes up to now settled,
  // then get_cluster_state.
  void pass();
  // The status a read gets now, and the pass it comes from (none: the
  // cluster now).
  Json served();
  std::optional<SimTime> served_from() const;

 private:
  Json now_state();

  ControlContext& ctx_;
  ReplicaMemory& memory_;
  std::optional<StatusOptions> opts_;
  std::optional<Json> last_;
  SimTime last_at_ = 0;
};

}  // namespace vramsim
