#pragma once
// What a scenario asks of one app (`apps[]`): its GPU memory, replicas and
// resources as BioEngine's deploy takes them, and for serving (`serve`) Ray
// Serve's per-deployment limits and autoscaling config by Ray's names, with
// vramsim's model of a replica's work: service time per GPU kind, and how it
// shares its device and itself (docs/serving.md). Where the requests come
// from (the traffic) is the scenario's business too, but not the control
// plane's. The scenario format owns these; the control plane deploys them.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/speed_curve.hpp"
#include "engine/time.hpp"
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

struct AppSpec {
  std::string id;
  std::optional<std::int64_t> gpu_memory_mb;
  bool disable_gpu = false;
  std::optional<std::int64_t> gpu_milli;  // an exact GPU request (SizingRequest::gpu_milli)
  // A GPU request stated as Ray's num_gpus (a Ray Serve config's
  // ray_actor_options), taken as is: BioEngine's VRAM sizing does not apply.
  std::optional<double> num_gpus;
  // Custom resources each replica asks for besides its size (an openb pod's
  // accelerator_type:<models>, which only nodes of those GPU models offer).
  std::map<std::string, double> resources;
  double cpus = 1;                  // per replica
  std::int64_t memory_bytes = 0;    // per replica
  // The app's ProxyDeployment actor's memory (BioEngine's deploy argument
  // proxy_memory_in_gb, 0.5 unless given: manager.py:2326-2327@fba5ffe),
  // which AppBuilder._sum_resources adds to the admission check's memory
  // (builder.py:405@fba5ffe) and its replica asks for (apps_manager_proxy.cpp);
  // 0: no proxy (a scheduler's pod, not a BioEngine app).
  std::int64_t proxy_memory_bytes = std::int64_t{512} << 20;
  int replicas = 1;
  std::optional<std::int64_t> observed_vram_mb;  // driver-observed peak per replica, context included
  // Device memory each replica process holds beyond its tensors (CUDA
  // context, cuBLAS/cuDNN workspaces): the app's, else the cluster's.
  std::int64_t cuda_context_mb = 680;
  // Whether a replica's constructor can run out of device memory (false for
  // an openb pod: a scheduler's trace, whose share is all it holds).
  bool device_memory_checked = true;
  std::string kind = "plain";       // "probe": its replicas answer calls with the fp16 matmul probe
  // Serving requests (docs/serving.md); with autoscaling, `replicas` is the
  // starting count and may be 0.
  std::optional<ServeSpec> serve;
  // One deployment of an application of several (apps[].deployments[]):
  // the application's id (empty: the app is its own application), and the
  // deployments (by app id) each request calls in turn, waiting for each
  // answer, once its own work is done.
  std::string application;
  std::vector<std::string> application_members;  // its deployments' app ids, the ingress first
  std::vector<std::string> calls;
  // BioEngine's deploy_app(..., auto_redeploy=True): once admitted, the
  // app is deployed again when it turns DEPLOY_FAILED or UNHEALTHY, with
  // a backoff (AppsManager::monitor_applications). Off by default.
  bool auto_redeploy = false;
  // Where a Ray Serve config put this deployment (`vramsim import
  // ray-serve`): labels `vramsim export ray-serve` writes back, not modelled.
  struct RayServeOrigin {
    std::string application, deployment, import_path;
  };
  std::optional<RayServeOrigin> ray_serve;
};

}  // namespace vramsim
