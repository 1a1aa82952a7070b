#pragma once
// Admission: the deploy-time resource check (reference-semantics section 4).
// Pure function of a snapshot taken under the deploy lock.
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/cluster_state.hpp"
#include "engine/id_hash.hpp"
#include "models/worker_defaults.hpp"

namespace vramsim {

struct NodeHeadroom {
  // The node's id, valid while the cluster is unchanged: a snapshot is read
  // at once, and copying every id made admission O(nodes) allocations.
  std::string_view node_id;
  bool head = false;
  double free_cpu = 0, free_gpu = 0, free_memory = 0;  // memory in bytes
  // The node's free resources, its custom ones included (an openb node's
  // `accelerator_type:<models>`); null: it offers no custom resource.
  const ResourceSet* available = nullptr;
  // Its totals: an update's add-back frees at most what the node has.
  double total_cpu = 0, total_gpu = 0, total_memory = 0;
};

// A worker node as the last monitor pass's cluster status lists it
// (`ProxyActor.get_cluster_state`, what `RayCluster.status["nodes"]`
// returns until the next pass; the head left out): its totals and what was
// free then.
struct StatusNode {
  ResourceSet total, available;
};
using StatusNodes = std::unordered_map<std::string, StatusNode, IdHash>;

// The registered nodes' headroom, in registration order: a list the caller
// fills (tests), or read from the cluster as the check goes, so a check that
// finds room on an early node costs O(1), not a copy of every node per
// deploy. Valid while the cluster is unchanged (the check runs at once).
class HeadroomList {
 public:
  void push_back(const NodeHeadroom& n) { owned_.push_back(n); }
  static HeadroomList view(const ClusterState& cluster) {
    HeadroomList l;
    l.cluster_ = &cluster;
    return l;
  }
  // The nodes of a status snapshot (in no particular order: a check only
  // asks whether any has room).
  static HeadroomList view(const StatusNodes& status) {
    HeadroomList l;
    l.status_ = &status;
    return l;
  }
  // True as soon as `pred` holds for a node.
  template <class Pred>
  bool any(Pred&& pred) const {
    if (status_) {
      for (const auto& [id, n] : *status_)
        if (pred(headroom(id, false, n.total, n.available))) return true;
      return false;
    }
    if (!cluster_) {
      for (const auto& n : owned_)
        if (pred(n)) return true;
      return false;
    }
    return cluster_->any_alive_node([&](const Node& n) { return pred(headroom(n.id, n.spec.head, n.total(), n.available)); });
  }

 private:
  static NodeHeadroom headroom(std::string_view id, bool head, const ResourceSet& total, const ResourceSet& available) {
    return NodeHeadroom{id,
                        head,
                        to_double(available.get_amount(kCPUId)),
                        to_double(available.get_amount(kGPUId)),
                        to_double(available.get_amount(kMemoryId)),
                        &available,
                        to_double(total.get_amount(kCPUId)),
                        to_double(total.get_amount(kGPUId)),
                        to_double(total.get_amount(kMemoryId))};
  }
  std::vector<NodeHeadroom> owned_;
  const ClusterState* cluster_ = nullptr;
  const StatusNodes* status_ = nullptr;
};

// What an update's check adds back to every node's free resources: the
// resources the app's running deployment was admitted with
// (`_deployed_applications[id]["application_resources"]`).
struct AppResources {
  double cpus = 0, gpus = 0, memory = 0;  // memory in bytes
};

struct AdmissionSnapshot {
  // The nodes the check scans: the last monitor pass's status
  // (manager.py:399-421@fba5ffe reads `ray_cluster.status["nodes"]`), so a
  // node that registered or a replica placed since is not seen; without a
  // status source (tests), the registered nodes now.
  HeadroomList nodes;
  AppResources add_back;             // an update: the app's admitted resources
  bool slurm_mode = true;
  int worker_jobs = 0;               // jobs squeue lists
  int unregistered_jobs = 0;         // jobs with no registered node
  int max_workers = 4;  // SlurmWorkers(max_workers=4), slurm_workers.py:57
  WorkerDefaults defaults;
};

struct AppDemand {
  std::string app_id;
  // Summed over the app's deployment classes, one replica each (as
  // AppBuilder._sum_resources sums them); memory in bytes.
  double cpus = 0, gpus = 0, memory = 0;
  double vram_mb = 0;  // the VRAM_MB resource the replica asks for (0: none)
  // Custom resources one replica asks for (an openb pod's gpu_spec as
  // `accelerator_type:<models>`): a node has room only if it has them free.
  std::map<std::string, double> custom = {};
};

struct AdmissionDecision {
  bool admitted = false;
  std::string reason;   // node_with_room | can_spawn_worker | capacity_in_flight | insufficient
  std::string message;  // the rejection message, empty when admitted
};

class AdmissionPolicy {
 public:
  static constexpr const char* kModel = "admission";
  virtual ~AdmissionPolicy() = default;
  virtual AdmissionDecision check(const AppDemand& app, const AdmissionSnapshot& s) const = 0;
};

// Shared pieces. A node has room when it is not the head and has the CPU,
// GPU, memory and every custom resource of the demand free. The custom
// resources are not one of the reference system's checks (its apps ask for
// none); both variants judge them alike, so a pod naming only GPU models no
// node with room has is rejected instead of waiting forever. On an update
// each node's used CPU, GPU and memory are first lowered by the app's
// admitted resources (not below 0), whichever node runs it: free becomes
// min(total, free + add_back), as manager.py:399-421@fba5ffe computes it.
bool node_has_room(const AppDemand& app, const AdmissionSnapshot& s);
bool defaults_fit(const AppDemand& app, const WorkerDefaults& d);
// The rejection as manager.py raises it: "Insufficient resources for
// application 'ID'. Requested: " and the _sum_resources dict as Python prints
// it. legacy (954f1fb): num_cpus, num_gpus, memory, each int(); fixed
// (840e77d): VRAM_MB too, num_gpus a float (0.01, 1.0).
enum class RequestedDict { Legacy, Fixed };
std::string insufficient_message(const AppDemand& app, RequestedDict style);
// Python's repr() of a float: the shortest round trip, "1.0" for whole ones,
// an exponent below 1e-4 and from 1e16 ("1e-05", "1e+16").
std::string python_float_repr(double x);

}  // namespace vramsim
