#include "control/cluster_status.hpp"

namespace vramsim {

void ClusterStatus::keep(StatusOptions opts) { opts_ = std::move(opts); }

Json ClusterStatus::now_state() {
  memory_.settle();
  return get_cluster_state(ctx_.cluster, ctx_.exec.now(), opts_ ? *opts_ : StatusOptions{});
}

void ClusterStatus::pass() {
  if (!opts_) return;
  last_ = now_state();
  last_at_ = ctx_.exec.now();
}

std::optional<SimTime> ClusterStatus::served_from() const {
  if (!last_ || ctx_.exited) return std::nullopt;
  return last_at_;
}

Json ClusterStatus::served() {
  if (served_from()) return *last_;
  return now_state();
}

}  // namespace vramsim
