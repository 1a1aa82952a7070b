#include "engine/cluster_state.hpp"

#include <algorithm>
#include <stdexcept>

namespace vramsim {

const char* name(DemandKind k) {
  switch (k) {
    case DemandKind::Actor: return "actors";
    case DemandKind::Task: return "tasks";
    case DemandKind::Job: return "jobs";
  }
  return "?";
}

NodeId ClusterState::add_node(NodeSpec spec, SimTime now) {
  Node n;
  n.id = spec.head ? NodeId("head") : "node-" + std::to_string(next_node_++);
  if (index_.count(n.id)) throw std::logic_error("node id already registered: " + n.id);
  // Ray derives the GPU total from the device list; keep the two consistent.
  if (!spec.devices.empty()) spec.resources.set(kGPU, static_cast<double>(spec.devices.size()));
  n.spec = std::move(spec);
  n.available = n.spec.resources;
  n.registered_at = now;
  for (std::size_t i = 0; i < n.spec.devices.size(); ++i) n.spec.devices[i].index = static_cast<int>(i);
  index_[n.id] = nodes_.size();
  nodes_.push_back(std::move(n));
  return nodes_.back().id;
}

std::vector<Demand> ClusterState::remove_node(const NodeId& id) {
  Node* n = node(id);
  if (!n || n->life.state() == NodeState::Dead) return {};
  n->life.move(NodeState::Dead);
  std::vector<Demand> lost;
  for (auto it = placed_.begin(); it != placed_.end();) {
    if (it->second.node == id) {
      lost.push_back(demands_.at(it->first));
      demands_.erase(it->first);
      it = placed_.erase(it);
    } else {
      ++it;
    }
  }
  n->available = ResourceSet{};
  return lost;
}

const Node* ClusterState::node(const NodeId& id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &nodes_[it->second];
}

Node* ClusterState::node(const NodeId& id) {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &nodes_[it->second];
}

const Node* ClusterState::node_for_job(const std::string& job) const {
  for (const auto& n : nodes_)
    if (n.spec.slurm_job_id == job && n.life.state() != NodeState::Dead) return &n;
  return nullptr;
}

std::vector<const Node*> ClusterState::alive_nodes() const {
  std::vector<const Node*> out;
  for (const auto& n : nodes_)
    if (n.alive()) out.push_back(&n);
  return out;
}

std::vector<Node*> ClusterState::alive_nodes_mut() {
  std::vector<Node*> out;
  for (auto& n : nodes_)
    if (n.alive()) out.push_back(&n);
  return out;
}

DemandId ClusterState::submit(DemandKind kind, std::string owner, std::string label,
                              ResourceSet request, SimTime now) {
  DemandId id = next_demand_++;
  demands_[id] = Demand{id, kind, std::move(owner), std::move(label), std::move(request), now};
  pending_.push_back(id);
  return id;
}

bool ClusterState::withdraw(DemandId id) {
  auto pit = std::find(pending_.begin(), pending_.end(), id);
  if (pit != pending_.end()) {
    pending_.erase(pit);
    demands_.erase(id);
    return true;
  }
  auto it = placed_.find(id);
  if (it == placed_.end()) return false;
  release(it->second);
  placed_.erase(it);
  demands_.erase(id);
  return true;
}

std::vector<const Demand*> ClusterState::pending(DemandKind kind) const {
  std::vector<const Demand*> out;
  for (DemandId id : pending_) {
    const Demand& d = demands_.at(id);
    if (d.kind == kind) out.push_back(&d);
  }
  return out;
}

const Demand* ClusterState::demand(DemandId id) const {
  auto it = demands_.find(id);
  return it == demands_.end() ? nullptr : &it->second;
}

const Placement* ClusterState::placement(DemandId id) const {
  auto it = placed_.find(id);
  return it == placed_.end() ? nullptr : &it->second;
}

std::optional<Placement> ClusterState::fit_on(const Node& n, const ResourceSet& request) const {
  if (!n.alive()) return std::nullopt;
  // Node-level check of everything, GPU included (the node's GPU total is the
  // sum of device fractions, a necessary but not sufficient condition).
  if (!n.available.contains(request)) return std::nullopt;
  Placement p;
  p.node = n.id;
  p.booked = request;
  const Amount gpu = request.get_amount(kGPU);
  const auto& devs = n.devices();
  if (gpu > 0 && gpu < kAmountScale) {
    // Fractional: one device must hold it. Best fit keeps whole devices free
    // for whole requests; ties go to the lowest index.
    int best = -1;
    for (const auto& d : devs)
      if (d.free_fraction() >= gpu && (best < 0 || d.free_fraction() < devs[best].free_fraction()))
        best = d.index;
    if (best < 0) return std::nullopt;
    p.devices = {best};
    p.device_fractions = {{best, gpu}};
  } else if (gpu >= kAmountScale) {
    if (gpu % kAmountScale != 0) return std::nullopt;  // Ray refuses 1.5 GPUs
    const Amount want = gpu / kAmountScale;
    for (const auto& d : devs) {
      if (static_cast<Amount>(p.devices.size()) == want) break;
      if (d.fraction_booked == 0) {
        p.devices.push_back(d.index);
        p.device_fractions.push_back({d.index, kAmountScale});
      }
    }
    if (static_cast<Amount>(p.devices.size()) != want) return std::nullopt;
  }
  const Amount vram = request.get_amount(kVramMB);
  if (vram > 0) {
    p.vram_mb = vram / kAmountScale;
    if (!p.devices.empty()) {
      p.vram_device = p.devices.front();
      const auto& d = devs[p.vram_device];
      p.device_overbooked = d.vram_booked_mb + p.vram_mb > d.total_vram_mb;
    }
  }
  return p;
}

std::optional<Placement> ClusterState::find_fit(const ResourceSet& request) const {
  for (const auto& n : nodes_)
    if (auto p = fit_on(n, request)) return p;
  return std::nullopt;
}

void ClusterState::book(const Placement& p) {
  Node* n = node(p.node);
  n->available -= p.booked;
  for (auto [dev, frac] : p.device_fractions) n->devices()[dev].fraction_booked += frac;
  if (p.vram_device >= 0) n->devices()[p.vram_device].vram_booked_mb += p.vram_mb;
}

void ClusterState::release(const Placement& p) {
  Node* n = node(p.node);
  if (!n || !n->alive()) return;
  n->available += p.booked;
  for (auto [dev, frac] : p.device_fractions) n->devices()[dev].fraction_booked -= frac;
  if (p.vram_device >= 0) n->devices()[p.vram_device].vram_booked_mb -= p.vram_mb;
}

std::vector<Placement> ClusterState::schedule_pending() {
  std::vector<Placement> made;
  for (auto it = pending_.begin(); it != pending_.end();) {
    const Demand& d = demands_.at(*it);
    auto p = find_fit(d.request);
    if (!p) {
      ++it;
      continue;
    }
    p->demand = d.id;
    book(*p);
    if (const Node* n = node(p->node)) {
      p->node_vram_available_after = static_cast<std::int64_t>(n->available.get(kVramMB));
      if (p->vram_device >= 0) p->device_vram_booked_after = n->devices()[p->vram_device].vram_booked_mb;
    }
    placed_[d.id] = *p;
    made.push_back(*p);
    it = pending_.erase(it);
  }
  return made;
}

void ClusterState::observe_device_memory(const NodeId& id, int device, std::int64_t used,
                                         SimTime now) {
  Node* n = node(id);
  if (!n || device < 0 || device >= static_cast<int>(n->devices().size())) return;
  n->devices()[device].observed_used_bytes = used;
  n->devices()[device].observed_at = now;
}

}  // namespace vramsim
