#pragma once
// Shutdown (BioEngine's `ray_cluster.py` shutdown and SlurmWorkers'
// `close_all`): the monitor loop stops, the apps manager cancels its deploys
// and undeploys every app, the creation task in flight is cancelled, and the
// shutdown model's plan over the registered workers and listed jobs says
// what follows: return at once, drain (graceful stops, awaited or not) and
// cancel every remaining job. When it is done the process has exited: no
// module starts anything afterwards.
#include <functional>

#include "control/apps_manager.hpp"
#include "control/control_context.hpp"
#include "control/workers_monitor.hpp"

namespace vramsim {

class Shutdown {
 public:
  Shutdown(ControlContext& ctx, AppsManager& apps, WorkersMonitor& monitor)
      : ctx_(ctx), apps_(apps), monitor_(monitor) {}

  // Once; later calls, and calls after it finished, are ignored.
  void run(std::function<void()> done);

 private:
  ShutdownPlan plan() const;  // the model's plan, traced
  void carry_out(const ShutdownPlan& plan, std::function<void()> finish);
  void finish(const std::function<void()>& done);  // close_all returned
  void exit(const std::function<void()>& done);    // the process exits

  ControlContext& ctx_;
  AppsManager& apps_;
  WorkersMonitor& monitor_;
};

}  // namespace vramsim
