#pragma once
// What an app serves with (its `serve` object): Ray Serve's per-deployment
// limits and autoscaling config, by Ray's names, and vramsim's model of a
// replica's work (service time per GPU kind, the batching curve). Where the
// requests come from (the traffic) is the scenario's business, not the
// control plane's. docs/serving.md.
#include <map>
#include <optional>
#include <string>

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
  // Batching curve: a request that starts with k requests on its replica
  // (itself included) takes (1 + slowdown x (k - 1)) times its draw; 0:
  // independent slots.
  double batching_slowdown = 0;
};

struct ServeSpec {
  int max_ongoing_requests = 5;
  int max_queued_requests = -1;               // -1: no limit
  std::optional<Duration> request_timeout;    // none: a request waits forever
  std::optional<ReplicaAutoscalingConfig> autoscaling;  // none: `replicas` is num_replicas
  ServiceTimeModel service;
  std::optional<Duration> slo_latency;        // for the SLO attainment figure
};

}  // namespace vramsim
