#include "backends/sim/node_scheduler.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vramsim {

namespace {

bool holds(const NodeShape& free, const NodeShape& ask) {
  return free.cpus >= ask.cpus && free.mem_mb >= ask.mem_mb && free.gpus >= ask.gpus;
}

void take(NodeShape& from, const NodeShape& ask) {
  from.cpus -= ask.cpus;
  from.mem_mb -= ask.mem_mb;
  from.gpus -= ask.gpus;
}

void give(NodeShape& to, const NodeShape& ask) {
  to.cpus += ask.cpus;
  to.mem_mb += ask.mem_mb;
  to.gpus += ask.gpus;
}

// First fit: the lowest-numbered `job.nodes` nodes whose free share (and,
// where `spare` is given, whose spare share too) holds the job's ask.
std::optional<std::vector<std::size_t>> place(const NodeJob& job, const std::vector<NodeShape>& free,
                                              const std::vector<NodeShape>* spare = nullptr) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < free.size() && static_cast<std::int64_t>(out.size()) < job.nodes; ++i)
    if (holds(free[i], job.per_node) && (!spare || holds((*spare)[i], job.per_node))) out.push_back(i);
  if (static_cast<std::int64_t>(out.size()) < job.nodes) return std::nullopt;
  return out;
}

}  // namespace

NodeScheduler::NodeScheduler(std::vector<NodeShape> nodes, PartitionPolicy policy, Callbacks callbacks)
    : capacity_(std::move(nodes)), free_(capacity_), policy_(policy), cb_(std::move(callbacks)) {
  if (capacity_.empty()) throw std::invalid_argument("partition: expected at least 1 node");
  for (const auto& n : capacity_)
    if (n.cpus < 0 || n.mem_mb < 0 || n.gpus < 0) throw std::invalid_argument("partition: expected capacities >= 0");
}

void NodeScheduler::submit(std::int64_t at, const NodeJob& job) {
  if (at < now_) throw std::invalid_argument(who(job.id) + "submitted in the past");
  const NodeShape& a = job.per_node;
  if (job.nodes < 1 || a.cpus < 0 || a.mem_mb < 0 || a.gpus < 0 || !place(job, capacity_))
    throw std::invalid_argument(who(job.id) + "asks for more than the empty partition holds");
  const std::uint64_t seq = enter(at, job);  // may run passes: before the queue grows
  queue_.push_back({job, seq});
}

bool NodeScheduler::cancel(std::int64_t at, std::int64_t id) {
  const auto it = find_to_cancel(at, id);
  if (it == ids_.end()) return false;
  const std::uint64_t seq = it->second;
  if (const auto slot = running_.find_if([seq](const Running& r) { return r.seq == seq; })) {
    ended_early();
    finish(*slot, PartitionOutcome::Cancelled);
  } else {
    const auto q = std::find_if(queue_.begin(), queue_.end(), [&](const Queued& e) { return e.seq == seq; });
    const NodeJob job = q->job;
    queue_.erase(q);
    ids_.erase(it);
    if (cb_.on_end) cb_.on_end(job, now_, PartitionOutcome::Cancelled);
  }
  pass_pending_ = true;
  return true;
}

void NodeScheduler::start(const Queued& q, std::vector<std::size_t> nodes) {
  const NodeJob& j = q.job;
  Running r{j, q.seq, std::move(nodes), now_, now_ + j.run_time, PartitionOutcome::Completed};
  if (j.time_limit && j.run_time > *j.time_limit) {
    r.end = now_ + *j.time_limit;
    r.outcome = PartitionOutcome::Timeout;
  }
  for (std::size_t n : r.nodes) take(free_[n], j.per_node);
  const std::int64_t end = r.end;
  const Slot slot = running_.insert(std::move(r));
  end_at(end, q.seq, slot);
  if (policy_ == PartitionPolicy::Easy) expected_.insert({now_ + j.estimate, q.seq, slot});
  const Running& stored = running_[slot];
  if (cb_.on_start) cb_.on_start(stored.job, now_, stored.nodes);
}

void NodeScheduler::finish(Slot slot, PartitionOutcome outcome) {
  const Running r = running_.take(slot);
  if (policy_ == PartitionPolicy::Easy) expected_.erase({r.start + r.job.estimate, r.seq, slot});
  ids_.erase(r.job.id);
  for (std::size_t n : r.nodes) give(free_[n], r.job.per_node);
  if (cb_.on_end) cb_.on_end(r.job, outcome == PartitionOutcome::Cancelled ? now_ : r.end, outcome);
}

void NodeScheduler::pass() {
  pass_pending_ = false;
  std::size_t head = 0;
  // Start the queue in order while it fits.
  for (; head < queue_.size(); ++head) {
    auto where = place(queue_[head].job, free_);
    if (!where) break;
    start(queue_[head], std::move(*where));
  }
  queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head));
  if (policy_ == PartitionPolicy::Fcfs || queue_.empty()) return;

  // EASY: the head's reservation is the first time it can be placed if
  // running jobs end at their expected ends (now, for one past it); the
  // spare share of each node then, after the head's share on its reserved
  // nodes, may go to jobs that run past that time.
  const NodeJob& h = queue_.front().job;
  std::vector<NodeShape> spare = free_;
  std::int64_t shadow = 0;
  auto it = expected_.begin();
  std::optional<std::vector<std::size_t>> reserved;
  while (!reserved && it != expected_.end()) {
    shadow = std::max(std::get<0>(*it), now_);
    while (it != expected_.end() && std::max(std::get<0>(*it), now_) == shadow) {
      const Running& r = running_[std::get<2>(*it)];
      for (std::size_t n : r.nodes) give(spare[n], r.job.per_node);
      ++it;
    }
    reserved = place(h, spare);
  }
  if (!reserved) throw std::logic_error("partition: no reservation for the queue head");
  for (std::size_t n : *reserved) take(spare[n], h.per_node);

  std::size_t out = 1;
  for (std::size_t i = 1; i < queue_.size(); ++i) {
    const Queued& q = queue_[i];
    std::optional<std::vector<std::size_t>> where;
    if (now_ + q.job.estimate <= shadow) {
      where = place(q.job, free_);
    } else if ((where = place(q.job, free_, &spare))) {
      for (std::size_t n : *where) take(spare[n], q.job.per_node);
    }
    if (where) {
      start(q, std::move(*where));
      continue;
    }
    if (out != i) queue_[out] = std::move(queue_[i]);
    ++out;
  }
  queue_.resize(out);
}

}  // namespace vramsim
