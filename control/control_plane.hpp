#pragma once
// The serving control plane, a thin owner of the real system's modules:
//   AppsManager     (apps_manager.hpp)     deploy lock, introspection, sizing,
//                                          admission, the submit task, replica
//                                          and proxy-replica lifecycles
//   Router          (router.hpp)           calls to an app's replicas
//   WorkersMonitor  (workers_monitor.hpp)  autoscaler loop, worker creation,
//                                          graceful stops, nodes joining and
//                                          leaving, memory sampling
//   ReplicaAutoscaler (replica_autoscaler.hpp) serving apps' replica counts
//   Shutdown        (shutdown.hpp)         close_all
// It wires them (the backend's node callbacks go to the workers monitor and
// then the apps manager) and keeps the API the runner, the live head and the
// tests drive. It sees the world only through an Executor and a
// ClusterBackend, so the same code runs in simulation and against a real
// cluster; every decision is made by a policy model over a snapshot.
//
// Serving (docs/serving.md): the router holds each serving app's requests
// and picks replicas; the replica autoscaler decides replica counts through
// a policy model over the router's load and applies them through the apps
// manager, which tells the router as replicas start and go.
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "control/app_record.hpp"
#include "control/apps_manager.hpp"
#include "control/cluster_status.hpp"
#include "control/control_context.hpp"
#include "control/replica_autoscaler.hpp"
#include "control/replica_memory.hpp"
#include "control/router.hpp"
#include "control/shutdown.hpp"
#include "control/workers_monitor.hpp"

namespace vramsim {

class ControlPlane final : public BackendListener {
 public:
  ControlPlane(Executor& exec, ClusterBackend& backend, ClusterState& cluster, TraceRecorder& trace,
               RandomStreams& rng, PolicySet policies, ControlConfig cfg);

  void start();                                 // starts the monitor loop
  void deploy(const AppSpec& app);  // queued behind the deploy lock
  void stop_app(const std::string& app_id) { apps_.stop_app(app_id); }
  void delete_app(const std::string& app_id) { apps_.delete_app(app_id); }
  // blocking_timeout: a blocking stop that force-exits after this long
  // (Shutdown::run).
  void shutdown(std::function<void()> done = {}, std::optional<Duration> blocking_timeout = std::nullopt) {
    shutdown_.run(std::move(done), blocking_timeout);
  }
  // Sends a request to a running replica of the app; the answer is traced.
  void call_app(const std::string& app_id, const Json& payload) { router_.call(app_id, payload); }
  // A serving request arrives at the app's handle (docs/serving.md);
  // `service` >= 0: its work as a trace gives it.
  void serve_request(const std::string& app_id, Duration service = -1) { router_.serve(app_id, service); }
  // At the run's end: settles every request still waiting or in service
  // (unfinished) and returns what each serving app's requests met. Once.
  std::map<std::string, ServeStats> settle_serve_stats() { return router_.finish(); }
  void keep_serve_windows() { router_.keep_windows(); }
  // Every request's path (RequestRecords), settled by settle_serve_stats().
  void keep_request_records(std::size_t expected = 0) { router_.keep_requests(expected); }
  const std::map<std::string, ServeLosses>& serving_losses_by_job() const { return router_.losses_by_job(); }
  RequestRecords take_request_records() { return router_.take_requests(); }
  std::vector<ServeWindow> take_serve_window() { return router_.take_window(); }

  void node_registered(NodeSpec spec) override;
  void node_lost(const std::string& job_id, const std::string& reason) override;

  // The GPU replicas' memory pushes up to now, into the cluster state: call
  // before reading the cluster directly.
  void settle_gpu_memory_reports() { memory_.settle(); }
  // The cluster status as get_status serves it (ClusterStatus): the last
  // monitor pass's, once keep_status has been called before the passes it
  // should keep.
  void keep_status(StatusOptions opts) { status_.keep(std::move(opts)); }
  Json status() { return status_.served(); }
  std::optional<SimTime> status_from_pass() const { return status_.served_from(); }

  const std::map<std::string, AppRecord>& apps() const { return apps_.apps(); }
  const AppRecord* app(const std::string& id) const { return apps_.app(id); }
  bool shut_down() const { return ctx_.exited; }
  bool shutting_down() const { return ctx_.shutting_down; }
  std::optional<SimTime> shutdown_done_at() const { return ctx_.shutdown_done_at; }
  const ControlConfig& config() const { return ctx_.cfg; }
  const PolicySet& policies() const { return ctx_.policies; }

 private:
  ControlContext ctx_;
  ReplicaMemory memory_;
  AppsManager apps_;
  Router router_;
  ReplicaAutoscaler autoscaler_;
  WorkersMonitor monitor_;
  Shutdown shutdown_;
  ClusterStatus status_;
};

}  // namespace vramsim
