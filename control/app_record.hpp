#pragma once
// What the apps manager keeps per app: the spec a deploy asked for, the app's
// lifecycle, its sizing and admission outcome, and one record per replica
// (its demand on the scheduler, lifecycle, node and device).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/cluster_state.hpp"
#include "engine/lifecycle.hpp"
#include "control/serve_spec.hpp"
#include "models/admission.hpp"
#include "models/sizing.hpp"

namespace vramsim {

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

struct ReplicaRecord {
  DemandId demand = 0;
  Lifecycle<ReplicaState> life{ReplicaState::Pending, &kReplicaTransitions};
  NodeId node;
  int device = -1;
};

struct AppRecord {
  AppSpec spec;
  Lifecycle<AppState> life{AppState::NotStarted, &kAppTransitions};
  SimTime requested_at = 0;
  std::optional<SimTime> running_at;
  std::optional<bool> admitted;
  std::string admission_reason, message;
  SizingResult sizing;
  ResourceSet replica_request;
  std::vector<ReplicaRecord> replicas;
  // The application's ProxyDeployment replica, once serve.run has deployed it.
  std::optional<ReplicaRecord> proxy;
  bool deploy_cancelled = false;  // stopped while its deploy was queued or in introspection
  // Ray Serve's constructor failures (DeploymentState): failed starts in a
  // row, the last error, and whether a replica of this deploy ever ran.
  int start_failures = 0;
  std::string start_error;
  bool replica_has_started = false;
  // Tracked for auto-redeploy: admitted (BioEngine registers an app only
  // once its resource check passed) and not stopped or deleted since; the
  // backoff while it stays unhealthy.
  bool redeploy_tracked = false;
  // What the last admitted deploy's check summed (`application_resources`),
  // until the app is stopped: an update's check adds it back to every node.
  std::optional<AppResources> application_resources;
  int redeploy_failures = 0;
  std::optional<SimTime> redeploy_next_at;
};

// What one replica process of `app` holds on its device, as the driver sees
// it: the app's observed_vram_mb where set; else, for an app that books
// gpu_memory_mb of a GPU, that plus its CUDA context; else (whole-GPU and
// CPU apps) none.
inline std::optional<std::int64_t> replica_device_mb(const AppSpec& app) {
  if (app.observed_vram_mb) return app.observed_vram_mb;
  if (app.gpu_memory_mb && *app.gpu_memory_mb > 0 && !app.disable_gpu) return *app.gpu_memory_mb + app.cuda_context_mb;
  return std::nullopt;
}

}  // namespace vramsim
