#pragma once
// The replica autoscaler (Ray Serve's controller loop for deployments with
// an autoscaling_config): every kControlLoopIntervalS it samples each
// serving app's load from the router (requests queued at the handle plus
// those on replicas), keeps their average over look_back_period_s as the
// handle reports it every metrics_interval_s, asks the app's replica
// autoscaling policy (models/replica_autoscaling.hpp) for a target and
// applies a change through the apps manager. With no replica running, the
// load is read as it is now (a request at a cold deployment scales it at
// once, as Ray's handle pushes its metrics then).
//
// Cost: O(autoscaled apps) per loop; the loop runs only once such an app
// was deployed, so a run without one has no extra timer.
#include <map>
#include <memory>
#include <string>
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
  void stop() { loop_.cancel(); }

 private:
  struct Watched {
    ReplicaAutoscalingConfig cfg;
    std::shared_ptr<const ReplicaAutoscalingPolicy> policy;
    ReplicaAutoscalingState state;
    int target = 0;
    std::vector<int> samples;        // the look-back window, one per loop
    std::size_t next_sample = 0;
    std::size_t filled = 0;
    long long sum = 0;
    double reported = 0;             // the last metrics push
    SimTime next_push = 0;
    SimTime next_record = 0;
  };
  void tick();

  ControlContext& ctx_;
  AppsManager& apps_;
  Router& router_;
  std::map<std::string, Watched> watched_;
  Executor::Periodic loop_;
};

}  // namespace vramsim
