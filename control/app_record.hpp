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
#include "models/admission.hpp"
#include "models/sizing.hpp"
#include "scenario/app_spec.hpp"

namespace vramsim {

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
