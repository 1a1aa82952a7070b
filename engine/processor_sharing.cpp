#include "engine/processor_sharing.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace vramsim {

namespace {

// Work left within this much of a tag counts as done: the clocks are
// doubles, and a finish time is rounded up to the next microsecond.
double slack(double v) { return 1e-9 * std::max(1.0, std::abs(v)); }

}  // namespace

SharedDevices::DeviceId SharedDevices::add_device() {
  devices_.emplace_back();
  devices_.back().last = exec_.now();
  return static_cast<DeviceId>(devices_.size() - 1);
}

SharedDevices::ReplicaId SharedDevices::add_replica(DeviceId device, const SpeedCurve& across,
                                                    const SpeedCurve& within) {
  Replica r;
  r.device = device;
  r.across = &across;
  r.within = &within;
  replicas_.push_back(std::move(r));
  return static_cast<ReplicaId>(replicas_.size() - 1);
}

void SharedDevices::advance(Device& d, SimTime now) {
  const auto dt = static_cast<double>(now - d.last);
  if (dt > 0)
    for (ReplicaId id : d.busy) replicas_[id].clock += replicas_[id].rate * dt;
  d.last = now;
}

void SharedDevices::rerate(Device& d) {
  const std::size_t m = d.busy.size();
  for (ReplicaId id : d.busy) {
    Replica& r = replicas_[id];
    r.rate = r.across->share(m) * r.within->share(static_cast<std::size_t>(r.live));
    r.peaks.device_busy = std::max(r.peaks.device_busy, static_cast<int>(m));
    r.peaks.in_service = std::max(r.peaks.in_service, r.live);
  }
}

void SharedDevices::set_busy(Replica& r, ReplicaId id, bool busy) {
  Device& d = devices_[r.device];
  if (busy) {
    r.busy_pos = static_cast<std::int32_t>(d.busy.size());
    d.busy.push_back(id);
    return;
  }
  const auto pos = static_cast<std::size_t>(r.busy_pos);
  d.busy[pos] = d.busy.back();
  replicas_[d.busy[pos]].busy_pos = static_cast<std::int32_t>(pos);
  d.busy.pop_back();
  r.busy_pos = -1;
  // Idle: the clock starts again from zero, which keeps its magnitude (and
  // so its rounding) that of one busy period.
  r.clock = 0;
  r.rate = 0;
  r.heap.clear();
}

void SharedDevices::prune(Replica& r) {
  while (!r.heap.empty()) {
    const Entry& top = r.heap.front();
    const Request& q = requests_[top.slot];
    if (q.live && q.generation == top.generation) return;
    std::pop_heap(r.heap.begin(), r.heap.end(), std::greater<>{});
    r.heap.pop_back();
  }
}

void SharedDevices::release(std::uint32_t slot) {
  Request& q = requests_[slot];
  q.done = nullptr;
  q.live = false;
  ++q.generation;
  free_.push_back(slot);
}

void SharedDevices::reschedule(DeviceId id) {
  Device& d = devices_[id];
  SimTime best = kTimeMax;
  ReplicaId target = 0;
  for (ReplicaId rid : d.busy) {
    Replica& r = replicas_[rid];
    prune(r);
    const double left = std::max(0.0, (r.heap.front().tag - r.clock) / r.rate);
    const SimTime t = d.last + static_cast<Duration>(std::ceil(left - slack(left)));
    if (t < best) { best = t; target = rid; }
  }
  if (d.timer && d.timer_at == best && d.target == target) return;
  if (d.timer) exec_.cancel(d.timer);
  d.timer = 0;
  if (best == kTimeMax) return;
  d.timer_at = best;
  d.target = target;
  d.timer = exec_.at(best, [this, id] { fire(id); });
}

SharedDevices::RequestId SharedDevices::start(ReplicaId replica, double work_us, Done done) {
  Replica& r = replicas_[replica];
  Device& d = devices_[r.device];
  advance(d, exec_.now());
  std::uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(requests_.size());
    requests_.emplace_back();
  }
  Request& q = requests_[slot];
  q.done = std::move(done);
  q.replica = replica;
  q.live = true;
  r.heap.push_back(Entry{r.clock + std::max(0.0, work_us), ++seq_, slot, q.generation});
  std::push_heap(r.heap.begin(), r.heap.end(), std::greater<>{});
  if (++r.live == 1) set_busy(r, replica, true);
  rerate(d);
  reschedule(r.device);
  return (static_cast<RequestId>(q.generation) << 32 | slot) + 1;
}

bool SharedDevices::cancel(RequestId request) {
  if (request == 0) return false;
  const auto slot = static_cast<std::uint32_t>((request - 1) & 0xffffffffu);
  const auto generation = static_cast<std::uint32_t>((request - 1) >> 32);
  if (slot >= requests_.size()) return false;
  Request& q = requests_[slot];
  if (!q.live || q.generation != generation) return false;
  const ReplicaId rid = q.replica;
  Replica& r = replicas_[rid];
  Device& d = devices_[r.device];
  advance(d, exec_.now());
  release(slot);
  if (--r.live == 0) set_busy(r, rid, false);
  rerate(d);
  reschedule(r.device);
  return true;
}

void SharedDevices::drop(ReplicaId replica) {
  Replica& r = replicas_[replica];
  if (r.live == 0) return;
  Device& d = devices_[r.device];
  advance(d, exec_.now());
  for (const Entry& e : r.heap)
    if (requests_[e.slot].live && requests_[e.slot].generation == e.generation) release(e.slot);
  r.live = 0;
  set_busy(r, replica, false);
  rerate(d);
  reschedule(r.device);
}

void SharedDevices::fire(DeviceId id) {
  Device& d = devices_[id];
  d.timer = 0;
  advance(d, exec_.now());
  {
    // The request the timer was set for is done: its finish was rounded up
    // to this microsecond, so any shortfall is rounding.
    Replica& t = replicas_[d.target];
    if (t.busy_pos >= 0) {
      prune(t);
      if (!t.heap.empty()) t.clock = std::max(t.clock, t.heap.front().tag);
    }
  }
  std::vector<Done> finished;
  finished.swap(finished_);
  // Walk a copy: replicas that go idle leave the busy list.
  const std::vector<ReplicaId> busy = d.busy;
  for (ReplicaId rid : busy) {
    Replica& r = replicas_[rid];
    while (true) {
      prune(r);
      if (r.heap.empty() || r.heap.front().tag > r.clock + slack(r.clock)) break;
      const std::uint32_t slot = r.heap.front().slot;
      std::pop_heap(r.heap.begin(), r.heap.end(), std::greater<>{});
      r.heap.pop_back();
      finished.push_back(std::move(requests_[slot].done));
      release(slot);
      --r.live;
    }
    if (r.live == 0) set_busy(r, rid, false);
  }
  rerate(d);
  reschedule(id);
  for (Done& f : finished) f();
  finished.clear();
  if (finished_.empty()) finished.swap(finished_);
}

}  // namespace vramsim
