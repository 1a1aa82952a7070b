#pragma once
// The cluster as Ray's scheduler sees it: registered nodes with node-level
// resources (CPU, GPU, memory, custom ones such as VRAM_MB and
// slurm_job_id:<id>), each GPU device tracked on its own, and the pending
// demand (actors, tasks, jobs) that an autoscaler reads.
//
// Placement follows Ray: a fractional GPU request must fit inside ONE device's
// remaining fraction and is bound to it; a whole request takes whole free
// devices; custom resources are node-level sums. The per-device VRAM booking
// is tracked beside Ray's view so that the over-claim hazard of a node-level
// VRAM_MB on a multi-GPU node is visible.
//
// No policy, no I/O: the control plane decides what to submit and when.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/lifecycle.hpp"
#include "engine/resources.hpp"
#include "engine/time.hpp"

namespace vramsim {

using NodeId = std::string;    // "head", "node-17"
using DemandId = std::uint64_t;

struct GpuDevice {
  int index = 0;
  std::string model;            // e.g. "NVIDIA A100-SXM4-40GB"
  std::int64_t total_vram_mb = 0;
  Amount fraction_booked = 0;   // of kAmountScale
  std::int64_t vram_booked_mb = 0;  // VRAM_MB booked by replicas bound here
  // What the driver observes (bytes); known only once sampled.
  std::optional<std::int64_t> observed_used_bytes;
  SimTime observed_at = 0;
  Amount free_fraction() const { return kAmountScale - fraction_booked; }
};

struct NodeSpec {
  std::string ip;
  bool head = false;
  std::string slurm_job_id;     // empty for the head and static nodes
  ResourceSet resources;        // what the node advertises
  std::vector<GpuDevice> devices;
  std::string accelerator_type; // short model name, e.g. "A100"
};

struct Node {
  NodeId id;
  NodeSpec spec;
  ResourceSet available;
  SimTime registered_at = 0;
  Lifecycle<NodeState> life{NodeState::Alive, &kNodeTransitions};
  std::vector<GpuDevice>& devices() { return spec.devices; }
  const std::vector<GpuDevice>& devices() const { return spec.devices; }
  const ResourceSet& total() const { return spec.resources; }
  bool alive() const { return life.state() == NodeState::Alive; }
};

enum class DemandKind { Actor, Task, Job };
const char* name(DemandKind k);  // "actors", "tasks", "jobs" (status spelling)

struct Demand {
  DemandId id = 0;
  DemandKind kind = DemandKind::Actor;
  std::string owner;            // app id, or what submitted it
  std::string label;            // e.g. "replica app#0", "introspection app"
  ResourceSet request;
  SimTime created = 0;
};

struct Placement {
  DemandId demand = 0;
  NodeId node;
  ResourceSet booked;           // node-level amounts taken
  std::vector<int> devices;     // bound device indices (CUDA_VISIBLE_DEVICES)
  std::vector<std::pair<int, Amount>> device_fractions;
  int vram_device = -1;         // device the VRAM_MB booking is attributed to
  std::int64_t vram_mb = 0;
  bool device_overbooked = false;  // per-device VRAM booked beyond its total
  // The node and device right after booking this placement (not after the
  // whole batch), as a reader of one placement needs them.
  std::int64_t node_vram_available_after = 0;
  std::int64_t device_vram_booked_after = 0;
};

class ClusterState {
 public:
  // Nodes -----------------------------------------------------------------
  NodeId add_node(NodeSpec spec, SimTime now);
  // Marks the node dead and drops its placements; returns the demands that
  // were placed there (the caller decides whether to resubmit them).
  std::vector<Demand> remove_node(const NodeId& id);
  const Node* node(const NodeId& id) const;
  Node* node(const NodeId& id);
  const Node* node_for_job(const std::string& slurm_job_id) const;
  // Alive nodes in registration order. Pointers stay valid until the next
  // add_node (nodes live in one vector).
  std::vector<const Node*> alive_nodes() const;
  std::vector<Node*> alive_nodes_mut();

  // Demand ----------------------------------------------------------------
  DemandId submit(DemandKind kind, std::string owner, std::string label, ResourceSet request,
                  SimTime now);
  // Withdraws a pending demand or releases a placed one. False if unknown.
  bool withdraw(DemandId id);
  std::vector<const Demand*> pending(DemandKind kind) const;  // oldest first
  std::size_t pending_count() const { return pending_.size(); }
  const Demand* demand(DemandId id) const;
  const Placement* placement(DemandId id) const;

  // Places pending demand, oldest first, wherever it fits now. Returns the new
  // placements in the order they were made.
  std::vector<Placement> schedule_pending();
  // Where `request` would fit now, without booking anything.
  std::optional<Placement> find_fit(const ResourceSet& request) const;

  // Driver-observed memory on a device (bytes) at time `now`.
  void observe_device_memory(const NodeId& node, int device, std::int64_t used_bytes, SimTime now);

 private:
  std::optional<Placement> fit_on(const Node& n, const ResourceSet& request) const;
  void book(const Placement& p);
  void release(const Placement& p);

  std::vector<Node> nodes_;  // registration order; dead nodes stay for history
  std::map<NodeId, std::size_t> index_;
  std::map<DemandId, Demand> demands_;
  std::vector<DemandId> pending_;  // oldest first
  std::map<DemandId, Placement> placed_;
  DemandId next_demand_ = 1;
  std::uint64_t next_node_ = 1;
};

}  // namespace vramsim
