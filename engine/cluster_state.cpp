#include "engine/cluster_state.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <climits>
#include <queue>
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

// ------------------------------------------------------------------ FitIndex

namespace {
constexpr Amount kNone = INT64_MIN;  // "no such capacity" / "no such need"
enum Dim { kAlive, kCpu, kGpu, kMem, kVram, kFreeFraction, kFreeDevices };
}  // namespace

FitIndex::Key FitIndex::key_of(const Node& n) {
  Key k;
  k.fill(kNone);
  if (!n.alive()) return k;
  k[kAlive] = 1;
  k[kCpu] = n.available.get_amount(kCPUId);
  k[kGpu] = n.available.get_amount(kGPUId);
  k[kMem] = n.available.get_amount(kMemoryId);
  k[kVram] = n.available.get_amount(kVramMBId);
  if (!n.devices().empty()) {
    Amount best = kNone, whole = 0;
    for (const auto& d : n.devices()) {
      best = std::max(best, d.free_fraction());
      if (d.fraction_booked == 0) ++whole;
    }
    k[kFreeFraction] = best;
    k[kFreeDevices] = whole;
  }
  return k;
}

FitIndex::Key FitIndex::needs_of(const ResourceSet& r) {
  Key k;
  k.fill(kNone);
  k[kAlive] = 1;
  if (r.stated(kCPUId)) k[kCpu] = r.get_amount(kCPUId);
  if (r.stated(kGPUId)) k[kGpu] = r.get_amount(kGPUId);
  if (r.stated(kMemoryId)) k[kMem] = r.get_amount(kMemoryId);
  if (r.stated(kVramMBId)) k[kVram] = r.get_amount(kVramMBId);
  const Amount gpu = r.get_amount(kGPUId);
  if (gpu > 0 && gpu < kAmountScale) k[kFreeFraction] = gpu;
  else if (gpu >= kAmountScale) k[kFreeDevices] = gpu / kAmountScale;
  return k;
}

void FitIndex::set(std::size_t i, const Key& key) {
  if (i >= cap_) {
    std::size_t cap = std::max<std::size_t>(cap_, 64);
    while (cap <= i) cap *= 2;
    Key none;
    none.fill(kNone);
    std::vector<Key> tree(2 * cap, none);
    for (std::size_t j = 0; j < cap_; ++j) tree[cap + j] = tree_[cap_ + j];
    for (std::size_t j = cap - 1; j >= 1; --j)
      for (int d = 0; d < kDims; ++d) tree[j][d] = std::max(tree[2 * j][d], tree[2 * j + 1][d]);
    tree_ = std::move(tree);
    cap_ = cap;
  }
  std::size_t j = cap_ + i;
  tree_[j] = key;
  // Up to the first ancestor whose maxima stay as they were: those above it
  // are maxima of unchanged values.
  for (j /= 2; j >= 1; j /= 2) {
    Key k;
    for (int d = 0; d < kDims; ++d) k[d] = std::max(tree_[2 * j][d], tree_[2 * j + 1][d]);
    if (k == tree_[j]) break;
    tree_[j] = k;
  }
}

long FitIndex::find(std::size_t from, const Key& needs) const {
  if (cap_ == 0 || from >= cap_) return -1;
  return find(1, 0, cap_, from, needs);
}

long FitIndex::find(std::size_t node, std::size_t lo, std::size_t hi, std::size_t from, const Key& needs) const {
  if (hi <= from) return -1;
  const Key& k = tree_[node];
  for (int d = 0; d < kDims; ++d)
    if (k[d] < needs[d]) return -1;
  if (hi - lo == 1) return static_cast<long>(lo);
  const std::size_t mid = lo + (hi - lo) / 2;
  const long left = find(2 * node, lo, mid, from, needs);
  return left >= 0 ? left : find(2 * node + 1, mid, hi, from, needs);
}

// -------------------------------------------------------------- ClusterState

NodeId ClusterState::add_node(NodeSpec spec, SimTime now) {
  Node n;
  const bool head = spec.head;
  n.id = head ? NodeId("head") : "node-" + std::to_string(next_node_++);
  if (head && index_.count(n.id)) throw std::logic_error("node id already registered: " + n.id);
  // Ray derives the GPU total from the device list; keep the two consistent.
  if (!spec.devices.empty()) spec.resources.set(kGPU, static_cast<double>(spec.devices.size()));
  n.spec = std::move(spec);
  n.available = n.spec.resources;
  n.registered_at = now;
  for (std::size_t i = 0; i < n.spec.devices.size(); ++i) n.spec.devices[i].index = static_cast<int>(i);
  const std::size_t i = nodes_.size();
  if (head)
    index_[n.id] = i;
  else
    by_number_.push_back(i);
  by_job_[n.spec.slurm_job_id].push_back(i);
  nodes_.push_back(std::move(n));
  placed_on_.emplace_back();
  if (nodes_.back().alive()) alive_.push_back(i);
  if (idle_worker(nodes_.back())) ++idle_workers_;
  if (nodes_.back().alive()) totals_.vram_total += nodes_.back().total().get_amount(kVramMBId);
  usage_dirty_.push_back(0);
  usage_changed(i);
  ++membership_version_;
  reindex(i);
  capacity_grew();
  return nodes_.back().id;
}

std::vector<Demand> ClusterState::remove_node(const NodeId& id) {
  const auto slot = slot_of(id);
  if (!slot) return {};
  const std::size_t i = *slot;
  Node* n = &nodes_[i];
  if (n->life.state() == NodeState::Dead) return {};
  if (idle_worker(*n)) --idle_workers_;
  if (n->alive()) {
    totals_.gpu_used -= n->total().get_amount(kGPUId) - n->available.get_amount(kGPUId);
    totals_.vram_total -= n->total().get_amount(kVramMBId);
    totals_.vram_used -= n->total().get_amount(kVramMBId) - n->available.get_amount(kVramMBId);
  }
  usage_changed(i);
  n->life.move(NodeState::Dead);
  ++membership_version_;
  // Lost in id order, as a walk over all placements would find them.
  std::vector<DemandId> ids = std::move(placed_on_[i]);
  placed_on_[i].clear();
  std::sort(ids.begin(), ids.end());
  std::vector<Demand> lost;
  lost.reserve(ids.size());
  for (DemandId d : ids) {
    auto it = demands_.find(d);
    lost.push_back(std::move(it->second.demand));
    demands_.erase(it);
    placed_.erase(d);
    in_creation_.erase(d);
  }
  n->available = ResourceSet{};
  if (2 * ++dead_in_alive_ > alive_.size()) {
    alive_.erase(std::remove_if(alive_.begin(), alive_.end(), [this](std::size_t k) { return !nodes_[k].alive(); }),
                 alive_.end());
    dead_in_alive_ = 0;
  }
  reindex(i);
  return lost;
}

std::optional<std::size_t> ClusterState::slot_of(const NodeId& id) const {
  // The ids this class hands out, "node-<k>", index by_number_ directly:
  // no hash lookup per event, whose misses grow with the table.
  static constexpr std::string_view kPrefix = "node-";
  if (id.size() > kPrefix.size() && id.compare(0, kPrefix.size(), kPrefix) == 0) {
    std::uint64_t k = 0;
    const char* first = id.data() + kPrefix.size();
    const char* last = id.data() + id.size();
    const auto [end, ec] = std::from_chars(first, last, k);
    if (ec != std::errc{} || end != last || k == 0 || k > by_number_.size()) return std::nullopt;
    const std::size_t i = by_number_[static_cast<std::size_t>(k - 1)];
    if (nodes_[i].id != id) return std::nullopt;  // "node-07" is not node-7
    return i;
  }
  const auto it = index_.find(id);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

const Node* ClusterState::node(const NodeId& id) const {
  const auto i = slot_of(id);
  return i ? &nodes_[*i] : nullptr;
}

Node* ClusterState::node(const NodeId& id) {
  const auto i = slot_of(id);
  return i ? &nodes_[*i] : nullptr;
}

const Node* ClusterState::node_for_job(const std::string& job) const {
  auto it = by_job_.find(job);
  if (it == by_job_.end()) return nullptr;
  for (std::size_t i : it->second)
    if (nodes_[i].life.state() != NodeState::Dead) return &nodes_[i];
  return nullptr;
}

std::vector<const Node*> ClusterState::take_usage_changes() {
  std::vector<const Node*> out;
  out.reserve(usage_changed_.size());
  for (std::size_t i : usage_changed_) {
    usage_dirty_[i] = 0;
    out.push_back(&nodes_[i]);
  }
  usage_changed_.clear();
  return out;
}

std::vector<const Node*> ClusterState::alive_nodes() const {
  std::vector<const Node*> out;
  out.reserve(alive_count());
  for (std::size_t i : alive_)
    if (nodes_[i].alive()) out.push_back(&nodes_[i]);
  return out;
}

std::vector<Node*> ClusterState::alive_nodes_mut() {
  std::vector<Node*> out;
  out.reserve(alive_count());
  for (std::size_t i : alive_)
    if (nodes_[i].alive()) out.push_back(&nodes_[i]);
  return out;
}

DemandId ClusterState::submit(DemandKind kind, std::string owner, std::string label,
                              ResourceSet request, SimTime now) {
  DemandRec& rec = add_demand(kind, std::move(owner), std::move(label), std::move(request), now);
  enqueue(rec);
  return rec.demand.id;
}

DemandId ClusterState::submit_held(DemandKind kind, std::string owner, std::string label,
                                   ResourceSet request, SimTime now) {
  DemandRec& rec = add_demand(kind, std::move(owner), std::move(label), std::move(request), now);
  rec.held = true;
  return rec.demand.id;
}

bool ClusterState::release_hold(DemandId id) {
  auto it = demands_.find(id);
  if (it == demands_.end() || !it->second.held) return false;
  it->second.held = false;
  enqueue(it->second);
  return true;
}

ClusterState::DemandRec& ClusterState::add_demand(DemandKind kind, std::string owner, std::string label,
                                                  ResourceSet request, SimTime now) {
  DemandId id = next_demand_++;
  auto [sit, fresh] = shape_of_.try_emplace(request, static_cast<std::uint32_t>(shapes_.size()));
  if (fresh) shapes_.push_back(Shape{request, {}, false});
  DemandRec& rec = demands_[id];
  rec.demand = Demand{id, kind, std::move(owner), std::move(label), std::move(request), now};
  rec.shape = sit->second;
  pending_[static_cast<int>(kind)].emplace(id, &rec.demand);
  ++pending_count_;
  return rec;
}

void ClusterState::enqueue(const DemandRec& rec) {
  Shape& s = shapes_[rec.shape];
  s.queue.insert(rec.demand.id);
  waiting_.insert(rec.shape);
  if (!s.blocked) ready_.insert(rec.shape);
}

void ClusterState::unqueue(const DemandRec& r) {
  pending_[static_cast<int>(r.demand.kind)].erase(r.demand.id);
  --pending_count_;
  if (r.held) return;  // in no shape's queue
  Shape& s = shapes_[r.shape];
  s.queue.erase(r.demand.id);
  if (s.queue.empty()) {
    // Growth only unblocks waiting shapes; an idle shape starts afresh.
    s.blocked = false;
    waiting_.erase(r.shape);
    ready_.erase(r.shape);
  }
}

bool ClusterState::withdraw(DemandId id) {
  auto it = demands_.find(id);
  if (it == demands_.end()) return false;
  if (!it->second.placed) {
    unqueue(it->second);
    demands_.erase(it);
    return true;
  }
  auto pit = placed_.find(id);
  const Placement p = std::move(pit->second);
  placed_.erase(pit);
  in_creation_.erase(id);
  demands_.erase(it);
  if (const auto n = slot_of(p.node)) {
    auto& on = placed_on_[*n];
    on.erase(std::find(on.begin(), on.end(), id));
  }
  release(p);
  return true;
}

std::vector<const Demand*> ClusterState::pending(DemandKind kind) const {
  std::vector<const Demand*> out;
  out.reserve(pending_[static_cast<int>(kind)].size());
  for (const auto& [id, d] : pending_[static_cast<int>(kind)]) out.push_back(d);
  return out;
}

const Demand* ClusterState::demand(DemandId id) const {
  auto it = demands_.find(id);
  return it == demands_.end() ? nullptr : &it->second.demand;
}

const Placement* ClusterState::placement(DemandId id) const {
  auto it = placed_.find(id);
  return it == placed_.end() ? nullptr : &it->second;
}

std::optional<Placement> ClusterState::fit_on(const Node& n, const ResourceSet& request, int device) const {
  if (!n.alive()) return std::nullopt;
  // Node-level check of everything, GPU included (the node's GPU total is the
  // sum of device fractions, a necessary but not sufficient condition).
  if (!n.available.contains(request)) return std::nullopt;
  Placement p;
  p.node = n.id;
  p.booked = request;
  const Amount gpu = request.get_amount(kGPUId);
  const auto& devs = n.devices();
  if (gpu > 0 && gpu < kAmountScale) {
    // Fractional: one device must hold it. Best fit keeps whole devices free
    // for whole requests; ties go to the lowest index.
    int best = -1;
    if (device >= 0) {
      if (static_cast<std::size_t>(device) < devs.size() && devs[device].free_fraction() >= gpu) best = device;
    } else {
      for (const auto& d : devs)
        if (d.free_fraction() >= gpu && (best < 0 || d.free_fraction() < devs[best].free_fraction()))
          best = d.index;
    }
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
  const Amount vram = request.get_amount(kVramMBId);
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
  const Amount gpu = request.get_amount(kGPUId);
  if (gpu >= kAmountScale && gpu % kAmountScale != 0) return std::nullopt;  // fits nowhere
  if (chooser_) {
    auto options = placement_options(request);
    if (options.empty()) return std::nullopt;
    const std::size_t k = chooser_->choose(request, options);
    return std::move(options.at(k).placement);
  }
  const FitIndex::Key needs = FitIndex::needs_of(request);
  // The index narrows by the fixed resources; custom ones (slurm_job_id:<id>,
  // accelerator types) are left to the exact check at each candidate.
  for (long i = fit_.find(0, needs); i >= 0; i = fit_.find(static_cast<std::size_t>(i) + 1, needs))
    if (auto p = fit_on(nodes_[static_cast<std::size_t>(i)], request)) return p;
  return std::nullopt;
}

std::vector<PlacementOption> ClusterState::placement_options(const ResourceSet& request) const {
  std::vector<PlacementOption> out;
  const Amount gpu = request.get_amount(kGPUId);
  if (gpu >= kAmountScale && gpu % kAmountScale != 0) return out;
  const bool share = gpu > 0 && gpu < kAmountScale;
  const FitIndex::Key needs = FitIndex::needs_of(request);
  std::vector<Amount> seen;
  for (long i = fit_.find(0, needs); i >= 0; i = fit_.find(static_cast<std::size_t>(i) + 1, needs)) {
    const Node& n = nodes_[static_cast<std::size_t>(i)];
    if (!share) {
      if (auto p = fit_on(n, request)) out.push_back({&n, std::move(*p)});
      continue;
    }
    // Devices with equal free shares are interchangeable: the lowest stands for them.
    seen.clear();
    for (const auto& d : n.devices()) {
      if (d.free_fraction() < gpu || std::find(seen.begin(), seen.end(), d.free_fraction()) != seen.end()) continue;
      seen.push_back(d.free_fraction());
      if (auto p = fit_on(n, request, d.index)) out.push_back({&n, std::move(*p)});
    }
  }
  return out;
}

void ClusterState::reindex(std::size_t i) { fit_.set(i, FitIndex::key_of(nodes_[i])); }

void ClusterState::capacity_grew() {
  // Room may have opened anywhere: every waiting shape may try again.
  for (std::uint32_t s : waiting_) shapes_[s].blocked = false;
  ready_ = waiting_;
}

void ClusterState::book(const Placement& p) {
  const auto slot = slot_of(p.node);
  if (!slot) throw std::out_of_range("book: no node " + p.node);
  const std::size_t i = *slot;
  Node* n = &nodes_[i];
  const bool was_idle = idle_worker(*n);
  n->available -= p.booked;
  idle_workers_ = idle_workers_ - was_idle + idle_worker(*n);
  totals_.gpu_used += p.booked.get_amount(kGPUId);
  totals_.vram_used += p.booked.get_amount(kVramMBId);
  usage_changed(i);
  for (auto [dev, frac] : p.device_fractions) n->devices()[dev].fraction_booked += frac;
  if (p.vram_device >= 0) n->devices()[p.vram_device].vram_booked_mb += p.vram_mb;
  placed_on_[i].push_back(p.demand);
  reindex(i);
}

void ClusterState::release(const Placement& p) {
  const auto slot = slot_of(p.node);
  if (!slot) return;
  Node* n = &nodes_[*slot];
  if (!n->alive()) return;
  const bool was_idle = idle_worker(*n);
  n->available += p.booked;
  idle_workers_ = idle_workers_ - was_idle + idle_worker(*n);
  totals_.gpu_used -= p.booked.get_amount(kGPUId);
  totals_.vram_used -= p.booked.get_amount(kVramMBId);
  usage_changed(*slot);
  for (auto [dev, frac] : p.device_fractions) n->devices()[dev].fraction_booked -= frac;
  if (p.vram_device >= 0) n->devices()[p.vram_device].vram_booked_mb -= p.vram_mb;
  reindex(*slot);
  capacity_grew();
}

std::vector<Placement> ClusterState::schedule_pending() {
  // Oldest first across the shapes that may fit. A shape that finds no room
  // is blocked: capacity only shrinks for the rest of the pass, and until it
  // grows again no demand of that shape can fit.
  std::vector<Placement> made;
  if (ready_.empty()) return made;
  using Front = std::pair<DemandId, std::uint32_t>;
  std::priority_queue<Front, std::vector<Front>, std::greater<Front>> heap;
  for (std::uint32_t s : ready_) heap.push({*shapes_[s].queue.begin(), s});
  while (!heap.empty()) {
    const auto [id, s] = heap.top();
    heap.pop();
    Shape& shape = shapes_[s];
    auto p = find_fit(shape.request);
    if (!p) {
      shape.blocked = true;
      ready_.erase(s);
      continue;
    }
    DemandRec& rec = demands_.at(id);
    p->demand = id;
    unqueue(rec);
    rec.placed = true;
    if (rec.demand.kind == DemandKind::Actor) in_creation_.emplace(id, &rec.demand);
    book(*p);
    if (const Node* n = node(p->node)) {
      p->node_vram_available_after = static_cast<std::int64_t>(n->available.get(kVramMB));
      if (p->vram_device >= 0) p->device_vram_booked_after = n->devices()[p->vram_device].vram_booked_mb;
    }
    made.push_back(*p);
    placed_.emplace(id, std::move(*p));
    if (!shape.queue.empty()) heap.push({*shape.queue.begin(), s});
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

void ClusterState::report_gpu_memory(const NodeId& id, std::int64_t used, SimTime at) {
  if (Node* n = node(id)) n->gpu_memory_report = GpuMemoryReport{used, at};
}

}  // namespace vramsim
