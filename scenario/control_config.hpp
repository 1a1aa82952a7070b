#pragma once
// The control plane's settings a scenario gives (`cluster`, `ray_serve`):
// the real system's timers and defaults, each cited where it is set
// (docs/scenario-format.md). The scenario format owns them; the control
// plane (control/) runs by them.
#include "engine/resources.hpp"
#include "engine/time.hpp"
#include "models/autoscaler.hpp"
#include "models/latency.hpp"
#include "models/replica_autoscaling.hpp"

namespace vramsim {

struct ControlConfig {
  bool slurm_mode = true;
  AutoscalerConfig autoscaler;
  // The worker's monitoring loop (worker.py:845-858@fba5ffe) sleeps
  // `monitor_poll` (1 s), then starts a pass once `monitor_tick` (10 s) has
  // passed since the previous pass started; a pass that raised sleeps its
  // backoff first (:928-956).
  Duration monitor_tick = 10 * kSecond;
  Duration monitor_poll = 1 * kSecond;
  // Time one monitor pass takes: with the 1 s polls after it, passes begin
  // every 10 s + work (work under 1 s), never on an exact multiple of the tick.
  LatencyModel monitor_work = LatencyModel::fixed(5 * kMillisecond);
  Duration creation_poll = 5 * kSecond;
  // AppBuilder._introspect_via_ray_task: a task asking num_cpus=0 (Ray lists
  // it with no required resources) with the baseline runtime env. It is
  // pending while that env builds (once per run: Ray caches it), then runs
  // `introspection_duration`; build() awaits it before the resource check.
  Duration introspection_env_build = 20 * kSecond;
  Duration introspection_duration = 5 * kSecond;
  ResourceSet introspection_request;
  // AppBuilder.submit: after admission, a second num_cpus=0 task,
  // build_and_run_application, with max_calls=1 (a fresh worker process each
  // time) in the env the introspection task built; it runs serve.run
  // (blocking=False), so the replicas exist once it ends. Pending while its
  // worker process starts, it asks for nothing, as the introspection task.
  // Both 0 by default (no figure measured): the replicas go out at the check.
  Duration submit_worker_start = 0;
  Duration submit_duration = 0;
  Duration grace_period = 60 * kSecond;   // each graceful-stop step's limit
  Duration stop_poll = 3 * kSecond;
  Duration cancel_poll = 1 * kSecond;
  std::size_t status_history = 100;
  // How often a live backend's device readings are taken.
  Duration memory_sample_period = 10 * kSecond;
  // A GPU replica pushes its device's memory at each Serve health check:
  // DEFAULT_HEALTH_CHECK_PERIOD_S (serve/_private/constants.py:263@5866967ffd).
  Duration health_check_period = 10 * kSecond;
  LatencyModel runtime_env_install = LatencyModel::fixed(0);
  LatencyModel replica_init = LatencyModel::fixed(0);
  // The ProxyDeployment's own runtime env (pip = proxy_pip), installed once
  // per node; 0 by default (no measured figure).
  LatencyModel proxy_env_install = LatencyModel::fixed(0);
  // From a node's registration to the Ray dashboard's first report of it
  // (each node's reporter refreshes every 5 s: REPORTER_UPDATE_INTERVAL_MS,
  // dashboard/modules/reporter/reporter_consts.py:5-6@5866967ffd); until then
  // get_gpu_memory_sizing does not see the node. 0 by default (not measured).
  LatencyModel dashboard_first_report = LatencyModel::fixed(0);
  // What follows close_all until the process exits, in order: RayCluster.stop's
  // serve.shutdown, ray.shutdown (the client's disconnect) and the head's
  // `ray stop --grace-period 30` (ray_cluster.py:1267-1296, 976-1020
  // @fba5ffe), then `head_exit`: the worker's Hypha disconnect and its exit
  // (worker.py:779-803). Each 0 by default, none measured: the process is
  // taken to exit as close_all returns.
  LatencyModel serve_shutdown = LatencyModel::fixed(0);
  LatencyModel ray_shutdown = LatencyModel::fixed(0);
  LatencyModel head_ray_stop = LatencyModel::fixed(0);
  LatencyModel head_exit = LatencyModel::fixed(0);
  // Run every replica autoscaling loop as a timer, none replayed: the
  // reference the replayed loops are tested against (not a scenario field).
  bool replica_autoscaler_every_loop = false;
  // The Ray Serve installation the replica autoscaler follows ($.ray_serve).
  RayServeSettings ray_serve;
};

}  // namespace vramsim
