#include "models/idle_history.hpp"

#include <algorithm>
#include <stdexcept>

namespace vramsim {

bool is_idle(const WorkerUsage& w) {
  const double used_gpu = w.total_gpu > 0 ? w.used_gpu : 0.0;
  return w.used_cpu == 0 && used_gpu == 0;
}

void IdleHistory::begin_sample(SimTime t) {
  if (!times_.empty() && t < times_.back()) throw std::logic_error("IdleHistory: samples must not go back in time");
  times_.push_back(t);
  if (times_.size() > capacity_) {
    times_.pop_front();
    ++first_sample_;
  }
}

void IdleHistory::update(const WorkerUsage& w) {
  if (times_.empty()) throw std::logic_error("IdleHistory: update before the first sample");
  const std::uint64_t now = first_sample_ + times_.size() - 1;
  auto [it, added] = workers_.try_emplace(w.node_id);
  Entry& e = it->second;
  if (added) {
    e.order = next_order_++;
    e.by_order = by_order_.emplace_hint(by_order_.end(), e.order, &e);
  }
  e.usage = w;
  if (is_idle(w)) {
    if (!e.idle_from) {
      e.idle_from = now;
      e.idle_run = idle_runs_.emplace(now, e.order).first;
    }
  } else if (e.idle_from) {
    idle_runs_.erase(e.idle_run);
    e.idle_from.reset();
  }
}

void IdleHistory::remove(const std::string& node_id) {
  auto it = workers_.find(node_id);
  if (it == workers_.end()) return;
  if (it->second.idle_from) idle_runs_.erase(it->second.idle_run);
  by_order_.erase(it->second.by_order);
  workers_.erase(it);
}

std::vector<const WorkerUsage*> IdleHistory::current() const {
  std::vector<const WorkerUsage*> out;
  out.reserve(by_order_.size());
  for (const auto& [order, e] : by_order_) out.push_back(&e->usage);
  return out;
}

std::optional<SimTime> IdleHistory::newest_sample_before(SimTime before) const {
  auto it = std::lower_bound(times_.begin(), times_.end(), before);
  if (it == times_.begin()) return std::nullopt;
  return *std::prev(it);
}

std::vector<const WorkerUsage*> IdleHistory::idle_since(SimTime since) const {
  // The first sample taken at `since`: a run that began there or earlier
  // covers every sample from it to the newest.
  auto at = std::lower_bound(times_.begin(), times_.end(), since);
  std::vector<const WorkerUsage*> out;
  if (at == times_.end() || *at != since) return out;
  // Among equal times the walk from the newest meets the last one first.
  at = std::prev(std::upper_bound(times_.begin(), times_.end(), since));
  const std::uint64_t sample = first_sample_ + static_cast<std::uint64_t>(at - times_.begin());
  std::vector<std::uint64_t> orders;
  for (auto r = idle_runs_.begin(); r != idle_runs_.end() && r->first <= sample; ++r) orders.push_back(r->second);
  std::sort(orders.begin(), orders.end());
  out.reserve(orders.size());
  if (orders.size() < by_order_.size() / 8) {
    for (std::uint64_t o : orders) out.push_back(&by_order_.at(o)->usage);
    return out;
  }
  // Most workers idle (a scale-down's check): one walk in order, where a
  // search per worker would miss the cache at each level of the tree.
  auto w = by_order_.begin();
  for (std::uint64_t o : orders) {
    while (w->first < o) ++w;
    out.push_back(&w->second->usage);
  }
  return out;
}

}  // namespace vramsim
