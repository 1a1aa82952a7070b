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
//
// Cost: placement is indexed. Pending demand is grouped by request shape; a
// shape that found no room stays blocked until capacity grows (a node
// registers, a placement is released), so a pass visits only shapes that could
// now fit. The first node that fits is found by a max-tree over the nodes in
// registration order (see FitIndex), not by a scan. Capacity must change only
// through this class (book/release/add/remove) for the index to stay exact.
#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <deque>
#include <unordered_map>
#include <vector>

#include "engine/id_hash.hpp"
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

// The node's GPU memory as the status knows it: the last value a GPU replica
// on the node pushed (device-wide bytes in use on its own device) and when.
struct GpuMemoryReport {
  std::int64_t used_bytes = 0;
  SimTime at = 0;
};

struct Node {
  NodeId id;
  NodeSpec spec;
  ResourceSet available;
  SimTime registered_at = 0;
  std::optional<GpuMemoryReport> gpu_memory_report;  // none pushed yet
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

// Leftmost-fit index over the nodes in registration order: each tree node
// holds the maxima of the placement-relevant amounts below it (alive, CPU,
// GPU, memory, VRAM_MB, largest free device fraction, count of wholly free
// devices), so a search skips every subtree where no node can hold the
// request. Leaves are confirmed by the exact fit check.
class FitIndex {
 public:
  static constexpr int kDims = 7;
  using Key = std::array<Amount, kDims>;
  static Key key_of(const Node& n);
  static Key needs_of(const ResourceSet& request);  // minimum per dimension
  void set(std::size_t i, const Key& k);
  // The first index >= from whose key is >= needs in every dimension; -1 if none.
  long find(std::size_t from, const Key& needs) const;

 private:
  long find(std::size_t node, std::size_t lo, std::size_t hi, std::size_t from, const Key& needs) const;
  std::size_t cap_ = 0;     // leaves, a power of two
  std::vector<Key> tree_;   // 1-based heap layout, 2 * cap_ entries
};

// One way to place a request: a node it fits and what it would take there.
struct PlacementOption {
  const Node* node = nullptr;
  Placement placement;
};
// Picks one of the options a request fits (ClusterState::placement_options)
// and returns its index; a placement policy model behind it
// (models/placement.hpp). Without one the first node that fits takes the
// request, on its device with the least free share that holds it.
class PlacementChooser {
 public:
  virtual ~PlacementChooser() = default;
  virtual std::size_t choose(const ResourceSet& request, const std::vector<PlacementOption>& options) const = 0;
};

// Pending demand of one kind, oldest first (ids ascend with submission).
using PendingQueue = std::map<DemandId, const Demand*>;

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
  // Calls pred on alive nodes in registration order until it returns true;
  // true if it did. No list is built.
  template <class Pred>
  bool any_alive_node(Pred&& pred) const {
    for (std::size_t i : alive_)
      if (nodes_[i].alive() && pred(nodes_[i])) return true;
    return false;
  }
  std::size_t alive_count() const { return alive_.size() - dead_in_alive_; }
  // Calls f on every node ever registered, dead ones included, in
  // registration order.
  template <class F>
  void for_each_node(F&& f) const {
    for (const Node& n : nodes_) f(n);
  }
  // Alive worker nodes (not the head) with nothing placed on them; kept up
  // to date on every change, so reading it costs O(1).
  std::size_t idle_worker_count() const { return idle_workers_; }
  // GPU and VRAM_MB booked, and VRAM_MB advertised, summed over the alive
  // nodes (the head included); kept up to date like the idle count.
  struct Totals {
    Amount gpu_used = 0, vram_total = 0, vram_used = 0;
  };
  const Totals& totals() const { return totals_; }
  // Nodes registered, removed, or with resources booked or released since
  // the previous call, in the order first changed: what the workers monitor
  // reads to update its status history (one reader).
  std::vector<const Node*> take_usage_changes();
  // Changes whenever a node joins or leaves (a cache key).
  std::uint64_t membership_version() const { return membership_version_; }

  // Demand ----------------------------------------------------------------
  DemandId submit(DemandKind kind, std::string owner, std::string label, ResourceSet request,
                  SimTime now);
  // Pending, and so in pending_queue() for the autoscaler and the status, but
  // not placed until release_hold(): a Ray task whose runtime env is still
  // being built waits in PENDING_NODE_ASSIGNMENT whatever it asks for.
  DemandId submit_held(DemandKind kind, std::string owner, std::string label, ResourceSet request,
                       SimTime now);
  // The held demand may now be placed; false if it is not held.
  bool release_hold(DemandId id);
  // Withdraws a pending demand or releases a placed one. False if unknown.
  bool withdraw(DemandId id);
  std::vector<const Demand*> pending(DemandKind kind) const;  // oldest first
  std::size_t pending_count() const { return pending_count_; }
  // The same without a copy; valid until the pending demand changes.
  const PendingQueue& pending_queue(DemandKind kind) const { return pending_[static_cast<int>(kind)]; }
  const Demand* demand(DemandId id) const;
  const Placement* placement(DemandId id) const;
  // Actors placed on a node whose creation has not returned yet (Ray's
  // PENDING_CREATION past the lease: installing the runtime env, then the
  // constructor), oldest first. An actor enters on placement and leaves on
  // actor_created(), withdraw() or the loss of its node.
  const PendingQueue& in_creation() const { return in_creation_; }
  // The placed actor's constructor returned (Ray: ALIVE). False if it was
  // not in creation.
  bool actor_created(DemandId id) { return in_creation_.erase(id) > 0; }

  // Places pending demand, oldest first, wherever it fits now. Returns the new
  // placements in the order they were made.
  std::vector<Placement> schedule_pending();
  // Where `request` would fit now, without booking anything.
  std::optional<Placement> find_fit(const ResourceSet& request) const;
  // Every way `request` fits now: the nodes in registration order, and per
  // node, for a share of one GPU, one option per distinct free share that
  // holds it (its lowest device), else one option.
  std::vector<PlacementOption> placement_options(const ResourceSet& request) const;
  // Placement decided by `chooser` from now on (null: the built-in first fit).
  void set_placement_chooser(std::shared_ptr<const PlacementChooser> chooser) { chooser_ = std::move(chooser); }

  // Driver-observed memory on a device (bytes) at time `now` (a backend that
  // measures it: live node agents).
  void observe_device_memory(const NodeId& node, int device, std::int64_t used_bytes, SimTime now);
  // A GPU replica on the node pushed its device's used bytes at `at`; the
  // node keeps only the last push (unknown node: ignored).
  void report_gpu_memory(const NodeId& node, std::int64_t used_bytes, SimTime at);

 private:
  // Pending demands with one request; ids ascend with submission, so the
  // set's order is the queue order.
  struct Shape {
    ResourceSet request;
    std::set<DemandId> queue;
    bool blocked = false;  // found no room since capacity last grew
  };
  struct DemandRec {
    Demand demand;
    std::uint32_t shape = 0;
    bool placed = false;
    bool held = false;  // pending, in no shape's queue (submit_held)
  };

  // `device` >= 0: a share goes to that device (if it holds it), not the best fit.
  std::optional<Placement> fit_on(const Node& n, const ResourceSet& request, int device = -1) const;
  std::shared_ptr<const PlacementChooser> chooser_;
  void book(const Placement& p);
  void release(const Placement& p);
  void reindex(std::size_t node_index);
  static bool idle_worker(const Node& n) { return n.alive() && !n.spec.head && n.available == n.total(); }
  void capacity_grew();
  // A pending demand, in pending_ but in no shape's queue yet.
  DemandRec& add_demand(DemandKind kind, std::string owner, std::string label, ResourceSet request, SimTime now);
  void enqueue(const DemandRec& rec);  // into its shape's queue: placeable
  void unqueue(const DemandRec& r);

  std::deque<Node> nodes_;  // registration order; dead nodes stay for history
  std::unordered_map<NodeId, std::size_t> index_;  // ids other than "node-<k>": the head
  std::vector<std::size_t> by_number_;              // k - 1 -> nodes_ index of "node-<k>"
  std::optional<std::size_t> slot_of(const NodeId& id) const;
  std::unordered_map<std::string, std::vector<std::size_t>, IdHash> by_job_;  // job -> nodes that ran it
  // Indices of alive nodes in registration order, and of nodes that died
  // since the last compaction (skipped when read): a removal costs O(1)
  // amortised, not a shift of the whole list.
  std::vector<std::size_t> alive_;
  std::size_t dead_in_alive_ = 0;
  std::size_t idle_workers_ = 0;
  Totals totals_;
  std::vector<std::size_t> usage_changed_;
  std::vector<char> usage_dirty_;  // per node: listed in usage_changed_
  void usage_changed(std::size_t i) {
    if (usage_dirty_[i]) return;
    usage_dirty_[i] = 1;
    usage_changed_.push_back(i);
  }
  std::uint64_t membership_version_ = 0;
  FitIndex fit_;
  std::unordered_map<DemandId, DemandRec> demands_;
  std::array<PendingQueue, 3> pending_;  // by kind, oldest first
  PendingQueue in_creation_;
  std::size_t pending_count_ = 0;
  std::vector<Shape> shapes_;
  std::unordered_map<ResourceSet, std::uint32_t, ResourceSetHash> shape_of_;
  std::set<std::uint32_t> waiting_;  // shapes with a non-empty queue
  std::set<std::uint32_t> ready_;    // of those, the ones not blocked
  std::unordered_map<DemandId, Placement> placed_;
  std::vector<std::vector<DemandId>> placed_on_;  // by node index
  DemandId next_demand_ = 1;
  std::uint64_t next_node_ = 1;
};

}  // namespace vramsim
