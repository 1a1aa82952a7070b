#include "analysis/fragmentation.hpp"

#include <algorithm>

namespace vramsim {

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

double FragmentationMeter::node_fragmentation(const Node& n, double& allocated) {
  key_.cpus = n.available.get_amount(kCPUId);
  key_.gpu_free.clear();
  if (by_model_) key_.model = n.spec.accelerator_type;
  allocated = 0;
  for (const auto& d : n.devices()) {
    key_.gpu_free.push_back(std::clamp<Amount>(d.free_fraction(), 0, kAmountScale));
    allocated += std::min(1.0, to_double(d.fraction_booked));
  }
  std::sort(key_.gpu_free.begin(), key_.gpu_free.end());
  auto it = memo_.find(key_);
  if (it == memo_.end())
    it = memo_.emplace(key_, expected_unallocatable_gpu(key_, tasks_) / kAmountScale).first;
  return it->second;
}

ClusterFragmentation FragmentationMeter::measure(const ClusterState& cluster) {
  ClusterFragmentation c;
  for (const Node* n : cluster.alive_nodes()) {
    if (n->devices().empty()) continue;
    double allocated = 0;
    const double f = node_fragmentation(*n, allocated);
    c.gpus += static_cast<double>(n->devices().size());
    c.allocated += allocated;
    c.fragmented += f;
    if (f > 0) ++c.nodes_fragmented;
    c.node_max = std::max(c.node_max, f);
  }
  return c;
}

std::vector<NodeFragmentation> FragmentationMeter::per_node(const ClusterState& cluster) {
  std::vector<NodeFragmentation> out;
  for (const Node* n : cluster.alive_nodes()) {
    if (n->devices().empty()) continue;
    NodeFragmentation r;
    r.node = n->id;
    r.model = n->spec.accelerator_type;
    r.gpus = static_cast<int>(n->devices().size());
    r.fragmented = node_fragmentation(*n, r.allocated);
    r.cpus_free = to_double(n->available.get_amount(kCPUId));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace vramsim
