#include "analysis/fragmentation.hpp"

#include <algorithm>

namespace vramsim {

std::size_t NodeFreeHash::operator()(const NodeFree& n) const {
  std::size_t h = std::hash<Amount>()(n.cpus);
  for (Amount f : n.gpu_free) h = h * 1000003u ^ std::hash<Amount>()(f);
  return h;
}

Amount unallocatable_gpu(const NodeFree& n, const TaskShape& t) {
  Amount idle = 0;
  for (Amount f : n.gpu_free) idle += f;
  // The task does not fit the node's CPU, or asks for no GPU at all: no free
  // GPU capacity of the node can go to it.
  if (t.cpus > n.cpus || t.gpus <= 0) return idle;
  if (t.gpus < kAmountScale) {
    // A share must fit inside one GPU: GPUs with less free are fragments.
    Amount frag = 0;
    for (Amount f : n.gpu_free)
      if (f < t.gpus) frag += f;
    return frag;
  }
  const Amount whole = (t.gpus + kAmountScale - 1) / kAmountScale;
  Amount free_whole = 0, partial = 0;
  for (Amount f : n.gpu_free) {
    if (f >= kAmountScale) ++free_whole;
    else partial += f;
  }
  // Whole GPUs: too few wholly free ones and the task cannot start here;
  // otherwise the partly used GPUs are what it cannot use.
  return free_whole < whole ? idle : partial;
}

double expected_unallocatable_gpu(const NodeFree& n, const std::vector<TaskShape>& tasks) {
  double sum = 0, weight = 0;
  for (const auto& t : tasks) {
    sum += t.weight * static_cast<double>(unallocatable_gpu(n, t));
    weight += t.weight;
  }
  return weight > 0 ? sum / weight : 0;
}

std::vector<TaskShape> merge_shapes(const std::vector<TaskShape>& tasks) {
  std::map<std::pair<Amount, Amount>, double> w;
  for (const auto& t : tasks) w[{t.cpus, t.gpus}] += t.weight;
  std::vector<TaskShape> out;
  out.reserve(w.size());
  for (const auto& [k, v] : w) out.push_back(TaskShape{k.first, k.second, v});
  return out;
}

void UtilisationSampler::sample(const ClusterState& cluster) {
  Sample s;
  std::map<std::uint32_t, std::uint32_t> counts;
  NodeFree key;
  for (const Node* n : cluster.alive_nodes()) {
    if (n->devices().empty()) continue;  // no GPU: nothing to fragment
    key.cpus = n->available.get_amount(kCPUId);
    key.gpu_free.clear();
    for (const auto& d : n->devices()) {
      key.gpu_free.push_back(std::clamp<Amount>(d.free_fraction(), 0, kAmountScale));
      s.gpus += 1;
      s.booked_gpus += std::min(1.0, to_double(d.fraction_booked));
      const double total = static_cast<double>(d.total_vram_mb);
      // A fraction booked stands for that share of the device's VRAM.
      s.vram_booked += std::min(total, std::max(static_cast<double>(d.vram_booked_mb), to_double(d.fraction_booked) * total));
      s.vram_total += total;
    }
    // Free shares in order: a node's fragmentation does not depend on which
    // device is which.
    std::sort(key.gpu_free.begin(), key.gpu_free.end());
    auto [it, added] = state_index_.try_emplace(key, static_cast<std::uint32_t>(states_.size()));
    if (added) states_.push_back(&it->first);
    ++counts[it->second];
  }
  s.states.assign(counts.begin(), counts.end());
  samples_.push_back(std::move(s));
}

UtilisationSampler::Result UtilisationSampler::evaluate(const std::vector<TaskShape>& tasks) const {
  Result r;
  r.samples = samples_.size();
  if (samples_.empty()) return r;
  const auto shapes = merge_shapes(tasks);
  // Each distinct node state is evaluated once, however often it occurs.
  std::vector<double> frag(states_.size());
  for (std::size_t i = 0; i < states_.size(); ++i) frag[i] = expected_unallocatable_gpu(*states_[i], shapes) / kAmountScale;
  for (const auto& s : samples_) {
    double f = 0;
    for (auto [state, count] : s.states) f += frag[state] * count;
    r.gpu_fragmentation += f;
    if (s.gpus > 0) {
      r.gpu_fragmentation_share += f / s.gpus;
      r.gpu_allocation += s.booked_gpus / s.gpus;
    }
    if (s.vram_total > 0) r.vram_utilisation += s.vram_booked / s.vram_total;
  }
  const double n = static_cast<double>(samples_.size());
  r.gpus = samples_.back().gpus;
  r.gpu_fragmentation /= n;
  r.gpu_fragmentation_share /= n;
  r.gpu_allocation /= n;
  r.vram_utilisation /= n;
  return r;
}

}  // namespace vramsim
