#pragma once
// The replica autoscaler (Ray Serve's controller loop for deployments with
// an autoscaling_config): every kControlLoopIntervalS it samples each
// serving app's load from the router (requests queued at the handle plus
// those on replicas), keeps their average over look_back_period_s as the
// handle reports it every metrics_interval_s, asks the app's replica
// autoscaling policy (models/replica_autoscaling.hpp) for a target and
// applies a change through the apps manager. The handle samples every
// record interval (RayServeSettings::record_interval) and pushes the
// window's mean every metrics_interval_s, and at once when a request
// arrives at a deployment with no replica running (Ray's scale-from-zero
// push, which carries the same mean: a cold deployment scales once a sample
// has seen the request). With RAY_SERVE_AGGREGATE_METRICS_AT_CONTROLLER the
// push carries the window's samples instead, and each decision aggregates
// them up to its own time (aggregation_function).
//
// Cost: the loop is Ray's, one decision every 0.1 s, but only the loops
// where something happens run as timers: a metrics push falling due, a
// request's arrival or end or a replica change (wake()), a queued request's
// timeout, or the loop whose decision changes a target. The load samples
// between are those of the load since the last loop run, and a push is
// skipped too where the whole window and the last push hold the load now. The loops between are the same pure decision over unchanged
// inputs and are replayed as calls, so an idle app costs no timer and a
// run without an autoscaled app none at all. Where the controller
// aggregates, its load moves with the decision's time: every loop runs.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "control/apps_manager.hpp"
#include "control/control_context.hpp"
#include "control/router.hpp"
#include "models/replica_autoscaling.hpp"

namespace vramsim {

class ReplicaAutoscaler {
 public:
  ReplicaAutoscaler(ControlContext& ctx, AppsManager& apps, Router& router) : ctx_(ctx), apps_(apps), router_(router) {}

  // A deploy of this app: it is autoscaled from now if its serve object has
  // an autoscaling_config (its target restarts at the starting count).
  void deployed(const AppSpec& spec);
  // Something the decisions read is about to change (a request arrives, a
  // replica starts or goes): the loops before now are caught up, and the
  // next one runs.
  void wake();

 private:
  struct Watched {
    ReplicaAutoscalingConfig cfg;
    std::shared_ptr<const ReplicaAutoscalingPolicy> policy;
    ReplicaAutoscalingState state;
    int target = 0;
    Duration record = 0;             // the handle's record interval
    std::vector<int> samples;        // the look-back window, one per record interval
    std::size_t next_sample = 0;
    std::size_t filled = 0;
    long long sum = 0;
    int last_sample = 0;             // the newest sample, and how many in a row end the window with it
    std::size_t same_run = 0;
    double reported = 0;             // the last metrics push: the window's mean
    std::vector<std::pair<SimTime, int>> pushed;  // the window's samples at the last push (aggregated at the controller)
    double now_load = 0;             // at the last loop run
    SimTime next_push = 0;
    SimTime next_record = 0;
  };
  void tick();
  static void take_samples(Watched& w, SimTime upto, SimTime now, double before);
  static bool steady(const Watched& w);
  void push(Watched& w) const;
  bool every_loop() const;
  void replay(SimTime until);        // the loops after the last one run and before `until`
  void catch_up();
  void schedule(SimTime t);
  SimTime next_grid(SimTime t) const;
  int decide(Watched& w, const ReplicaLoad& load) const;
  static bool active(const AppRecord* app);
  ReplicaLoad load_of(const std::string& id, const Watched& w, SimTime now) const;

  ControlContext& ctx_;
  AppsManager& apps_;
  Router& router_;
  std::map<std::string, Watched> watched_;
  SimTime last_tick_ = 0;            // the last loop run (or the grid's origin)
  TimerId timer_ = 0;
  SimTime scheduled_at_ = 0;
};

}  // namespace vramsim
