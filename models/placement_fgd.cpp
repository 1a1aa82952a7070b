// fgd: fragmentation gradient descent (Weng et al., ATC '23). Each option is
// scored by how much it grows its node's fragmentation, the GPU capacity the
// workload's typical tasks could not use (models/fragmentation.hpp), after
// minus before; the least growth wins, the first in node order on ties.
#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "models/placement.hpp"
#include "models/registry.hpp"

namespace vramsim {

namespace {
class FgdPlacement final : public PlacementPolicy {
 public:
  std::size_t choose(const ResourceSet&, const std::vector<PlacementOption>& options,
                     const std::vector<TaskShape>& typical) const override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!same_tasks(typical) || memo_.size() > kMemoLimit) {
      memo_.clear();
      memo_tasks_ = typical;
      by_model_ = any_names_models(typical);
    }
    return argmin(options, [&](const PlacementOption& o) {
      return fragmentation(node_free_after(*o.node, o.placement)) - fragmentation(node_free(*o.node));
    });
  }

 private:
  // A node's fragmentation depends on its free state only, and nodes of one
  // type pass through the same states: each state is evaluated once per
  // task list (a memo; the answer is the same without it).
  double fragmentation(NodeFree n) const {
    std::sort(n.gpu_free.begin(), n.gpu_free.end());
    if (!by_model_) n.model.clear();  // nodes of every model share states
    auto [it, fresh] = memo_.try_emplace(std::move(n), 0.0);
    if (fresh) it->second = expected_unallocatable_gpu(it->first, memo_tasks_);
    return it->second;
  }
  bool same_tasks(const std::vector<TaskShape>& t) const {
    return std::equal(t.begin(), t.end(), memo_tasks_.begin(), memo_tasks_.end(),
                      [](const TaskShape& a, const TaskShape& b) {
                        return a.cpus == b.cpus && a.gpus == b.gpus && a.weight == b.weight && a.models == b.models;
                      });
  }
  static constexpr std::size_t kMemoLimit = 1 << 20;
  mutable std::mutex mu_;
  mutable std::vector<TaskShape> memo_tasks_;
  mutable bool by_model_ = false;
  mutable std::unordered_map<NodeFree, double, NodeFreeHash> memo_;
};
}  // namespace

void register_placement_fgd_policies(PolicyRegistry& r) { r.add<PlacementPolicy, FgdPlacement>("fgd"); }

}  // namespace vramsim
