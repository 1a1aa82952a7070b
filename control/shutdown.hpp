#pragma once
// Shutdown (BioEngine's `ray_cluster.py` shutdown and SlurmWorkers'
// `close_all`): the monitor loop stops, the apps manager cancels its deploys
// and undeploys every app, the creation task in flight is cancelled, and the
// shutdown model's plan over the registered workers and listed jobs says
// what follows: return at once, drain (graceful stops, awaited or not) and
// cancel every remaining job. When it is done the process has exited: no
// module starts anything afterwards.
#include <functional>
#include <optional>

#include "control/apps_manager.hpp"
#include "control/control_context.hpp"
#include "control/workers_monitor.hpp"

namespace vramsim {

class Shutdown {
 public:
  Shutdown(ControlContext& ctx, AppsManager& apps, WorkersMonitor& monitor)
      : ctx_(ctx), apps_(apps), monitor_(monitor) {}

  // Once; later calls, and calls after it finished, are ignored.
  // blocking_timeout: the worker's blocking stop (`BioEngineWorker._stop(
  // blocking=True)`, worker.py:967-996@fba5ffe: Ctrl+C in the foreground,
  // or `stop(blocking=True)`), which waits `graceful_shutdown_timeout` for
  // the cleanup and then force-exits (os._exit(1)) wherever the cleanup is;
  // none: the signal path, which does not wait.
  void run(std::function<void()> done, std::optional<Duration> blocking_timeout = std::nullopt);

 private:
  ShutdownPlan plan() const;  // the model's plan, traced
  void carry_out(const ShutdownPlan& plan, std::function<void()> finish);
  void finish(const std::function<void()>& done);  // close_all returned
  void exit(const std::function<void()>& done);    // the process exits

  ControlContext& ctx_;
  AppsManager& apps_;
  WorkersMonitor& monitor_;
  TimerId force_exit_ = 0;  // a blocking stop's limit, while it runs
};

}  // namespace vramsim
