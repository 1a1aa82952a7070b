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
#include "models/sizing.hpp"

namespace vramsim {

struct AppSpec {
  std::string id;
  std::optional<std::int64_t> gpu_memory_mb;
  bool disable_gpu = false;
  std::optional<std::int64_t> gpu_milli;  // an exact GPU request (SizingRequest::gpu_milli)
  // Custom resources each replica asks for besides its size (an openb pod's
  // accelerator_type:<models>, which only nodes of those GPU models offer).
  std::map<std::string, double> resources;
  double cpus = 1;                  // per replica
  std::int64_t memory_bytes = 0;    // per replica
  int replicas = 1;
  std::optional<std::int64_t> observed_vram_mb;  // driver-observed peak per replica
  std::string kind = "plain";       // "probe": its replicas answer calls with the fp16 matmul probe
  // Serving requests (docs/serving.md); with autoscaling, `replicas` is the
  // starting count and may be 0.
  std::optional<ServeSpec> serve;
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
  bool deploy_cancelled = false;  // stopped while its deploy was queued or in introspection
};

}  // namespace vramsim
