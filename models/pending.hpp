#pragma once
// Which actors are pending demand (reference-semantics section 5, the fifth
// defect in docs/models.md). ProxyActor._get_pending_actors lists every
// actor in PENDING_CREATION that asks for CPU, GPU or memory
// (proxy_actor.py:251-290@1725d5c). Ray keeps an actor in PENDING_CREATION
// from its registration until its creation task returns: the state is set in
// GcsActorManager::CreateActor and left only in OnActorCreationSuccess
// (src/ray/gcs/actor/gcs_actor_manager.cc@58b3306c), and the runtime env is
// set up while the raylet pops a worker for the already granted lease
// (WorkerPool::PopWorker -> GetOrCreateRuntimeEnv,
// src/ray/raylet/worker_pool.cc@b6d803b0). So a replica placed on a node and
// still installing its runtime env, or still in its constructor, is listed
// as pending though its node holds its resources. The code says so itself:
// "TODO: Don't count task/actor/job in runtime creation"
// (proxy_actor.py:650@1725d5c). A variant chooses which of these lists the
// proxy reports; the autoscaler and the status both read that list.
#include <cstddef>
#include <initializer_list>
#include <vector>

#include "engine/cluster_state.hpp"
#include "engine/resources.hpp"

namespace vramsim {

// One list of pending requests, oldest first: owned, or a view of one or two
// of the cluster's queues merged by submission order, so a tick does not
// copy every pending request.
class RequestList {
 public:
  RequestList() = default;
  RequestList(std::initializer_list<ResourceSet> items) : owned_(items) {}
  // Borrows `q` (and `more`); valid while the queues are unchanged (the
  // tick's snapshot).
  static RequestList view(const PendingQueue& q, const PendingQueue* more = nullptr) {
    RequestList l;
    l.view_ = &q;
    l.more_ = more && !more->empty() ? more : nullptr;
    return l;
  }
  bool empty() const { return size() == 0; }
  std::size_t size() const {
    if (!view_) return owned_.size();
    return view_->size() + (more_ ? more_->size() : 0);
  }
  void push_back(ResourceSet r) {
    materialise();
    owned_.push_back(std::move(r));
  }
  void clear() {
    view_ = more_ = nullptr;
    owned_.clear();
  }
  // The newest entry for which pred holds, or nullptr.
  template <class Pred>
  const ResourceSet* find_newest(Pred&& pred) const {
    if (view_) {
      auto a = view_->rbegin();
      const auto a_end = view_->rend();
      if (!more_) {
        for (; a != a_end; ++a)
          if (pred(a->second->request)) return &a->second->request;
        return nullptr;
      }
      auto b = more_->rbegin();
      const auto b_end = more_->rend();
      while (a != a_end || b != b_end) {
        // Newest first across both: the larger id was submitted later.
        const bool take_a = b == b_end || (a != a_end && a->first > b->first);
        const Demand* d = take_a ? (a++)->second : (b++)->second;
        if (pred(d->request)) return &d->request;
      }
      return nullptr;
    }
    for (auto it = owned_.rbegin(); it != owned_.rend(); ++it)
      if (pred(*it)) return &*it;
    return nullptr;
  }
  // Calls f on every entry, oldest first.
  template <class F>
  void for_each(F&& f) const {
    if (!view_) {
      for (const auto& r : owned_) f(r);
      return;
    }
    auto a = view_->begin();
    if (!more_) {
      for (; a != view_->end(); ++a) f(a->second->request);
      return;
    }
    auto b = more_->begin();
    while (a != view_->end() || b != more_->end()) {
      const bool take_a = b == more_->end() || (a != view_->end() && a->first < b->first);
      f((take_a ? (a++)->second : (b++)->second)->request);
    }
  }

 private:
  void materialise() {
    if (!view_) return;
    std::vector<ResourceSet> all;
    for_each([&all](const ResourceSet& r) { all.push_back(r); });
    owned_ = std::move(all);
    view_ = more_ = nullptr;
  }
  std::vector<ResourceSet> owned_;
  const PendingQueue* view_ = nullptr;
  const PendingQueue* more_ = nullptr;
};

class PendingPolicy {
 public:
  static constexpr const char* kModel = "pending";
  // What both legacy and fixed BioEngine do (the fix left it alone).
  static constexpr const char* kDefault = "counts-installing";
  virtual ~PendingPolicy() = default;
  // The pending actors the proxy reports, oldest first, from those waiting
  // for a node and those placed whose creation has not returned
  // (ClusterState::in_creation: installing their runtime env or in their
  // constructor).
  virtual RequestList actors(const PendingQueue& waiting, const PendingQueue& in_creation) const = 0;
};

}  // namespace vramsim
