#pragma once
// What an app serves with (its `serve` object): Ray Serve's per-deployment
// limits and autoscaling config, by Ray's names, and vramsim's model of a
// replica's work (service time per GPU kind, how it shares its device and itself). Where the
// requests come from (the traffic) is the scenario's business, not the
// control plane's. docs/serving.md.
#include <map>
#include <optional>
#include <string>

#include "engine/speed_curve.hpp"
#include "models/latency.hpp"
#include "models/replica_autoscaling.hpp"

namespace vramsim {

// How long one request keeps a replica busy.
struct ServiceTimeModel {
  LatencyModel base = LatencyModel::fixed(1000000);  // 1 s
  // Per GPU kind, by nvidia-smi device name; a kind not listed takes `base`.
  std::map<std::string, LatencyModel> by_device;
  // Set: `base` holds on this device name, and another device's draw is
  // scaled by reference fp16 TFLOPS / its fp16 TFLOPS (an assumption).
  std::string reference_device;
  double reference_tflops = 0;
  // The older batching curve (1 + slowdown x (k - 1) times the draw with k
  // on the replica), now given as the replica's concurrency curve
  // h(r) = r / (1 + slowdown x (r - 1)); 0: not set.
  double batching_slowdown = 0;
};

struct ServeSpec {
  int max_ongoing_requests = 5;
  int max_queued_requests = -1;               // -1: no limit
  std::optional<Duration> request_timeout;    // none: a request waits forever
  std::optional<ReplicaAutoscalingConfig> autoscaling;  // none: `replicas` is num_replicas
  ServiceTimeModel service;
  std::optional<Duration> slo_latency;        // for the SLO attainment figure
  // How the replica's requests share the device with other busy replicas
  // (g) and the replica among themselves (h): docs/serving.md.
  SpeedCurve device_sharing{"time-sliced", {1}};
  SpeedCurve replica_concurrency{"time-sliced", {1}};
  // A trace's per-request time: the request's work alone on its device
  // (false), or its time as measured under the sharing it met (true: it
  // takes exactly that long, outside the device's sharing).
  bool trace_time_as_measured = false;
};

}  // namespace vramsim
