#include "backends/sim/partition_scheduler.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace vramsim {

PartitionScheduler::PartitionScheduler(std::int64_t procs, PartitionPolicy policy, Callbacks callbacks)
    : procs_(procs), free_(procs), policy_(policy), cb_(std::move(callbacks)) {
  if (procs < 1) throw std::invalid_argument("partition: expected at least 1 processor");
}

void PartitionScheduler::submit(std::int64_t at, const PartitionJob& job) {
  if (at < now_) throw std::invalid_argument(who(job.id) + "submitted in the past");
  if (job.procs < 1 || job.procs > procs_)
    throw std::invalid_argument(who(job.id) + "expected 1.." + std::to_string(procs_) + " processors, got " +
                                std::to_string(job.procs));
  const std::uint64_t seq = enter(at, job);  // may run passes: before the queue grows
  queue_.push_back({job, seq});
  least_behind_head_ = std::min(least_behind_head_, job.procs);
}

bool PartitionScheduler::cancel(std::int64_t at, std::int64_t id) {
  const auto it = find_to_cancel(at, id);
  if (it == ids_.end()) return false;
  const std::uint64_t seq = it->second;
  if (const auto slot = running_.find_if([seq](const Running& r) { return r.seq == seq; })) {
    ended_early();
    finish(*slot, PartitionOutcome::Cancelled);
  } else {
    const auto q = std::find_if(queue_.begin() + static_cast<std::ptrdiff_t>(head_), queue_.end(),
                                [&](const Queued& e) { return e.seq == seq; });
    const PartitionJob job = q->job;
    queue_.erase(q);
    ids_.erase(it);
    if (cb_.on_end) cb_.on_end(job, now_, PartitionOutcome::Cancelled);
  }
  pass_pending_ = true;  // freed processors or a new queue head
  return true;
}

void PartitionScheduler::start(const Queued& q) {
  const PartitionJob& j = q.job;
  Running r{j, q.seq, now_ + j.run_time, PartitionOutcome::Completed, {}};
  if (j.time_limit && j.run_time > *j.time_limit) {
    r.end = now_ + *j.time_limit;
    r.outcome = PartitionOutcome::Timeout;
  }
  free_ -= j.procs;
  if (policy_ == PartitionPolicy::Easy) r.expected = expected_.insert({now_ + j.estimate, q.seq, j.procs}).first;
  const std::int64_t end = r.end;
  const Slot slot = running_.insert(std::move(r));
  end_at(end, q.seq, slot);
  if (cb_.on_start) cb_.on_start(running_[slot].job, now_);
}

void PartitionScheduler::finish(Slot slot, PartitionOutcome outcome) {
  const Running r = running_.take(slot);
  if (policy_ == PartitionPolicy::Easy) expected_.erase(r.expected);
  ids_.erase(r.job.id);
  free_ += r.job.procs;
  if (cb_.on_end) cb_.on_end(r.job, outcome == PartitionOutcome::Cancelled ? now_ : r.end, outcome);
}

void PartitionScheduler::pass() {
  pass_pending_ = false;
  if (policy_ == PartitionPolicy::Fcfs)
    pass_fcfs();
  else
    pass_easy();
}

void PartitionScheduler::start_in_order() {
  while (head_ < queue_.size() && queue_[head_].job.procs <= free_) start(queue_[head_++]);
}

void PartitionScheduler::compact() {
  // Drop started jobs once they are most of the vector: amortised O(1).
  if (head_ == queue_.size()) {
    queue_.clear();
    head_ = 0;
  } else if (head_ > 1024 && head_ * 2 > queue_.size()) {
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
}

void PartitionScheduler::pass_fcfs() {
  start_in_order();
  compact();
}

std::pair<std::int64_t, std::int64_t> PartitionScheduler::shadow(std::int64_t need) const {
  std::int64_t avail = free_;
  auto it = expected_.begin();
  while (it != expected_.end()) {
    // A job past its estimate is expected to end now.
    const std::int64_t t = std::max(std::get<0>(*it), now_);
    // Every job expected to end at t frees its processors at t.
    while (it != expected_.end() && std::max(std::get<0>(*it), now_) == t) {
      avail += std::get<2>(*it);
      ++it;
    }
    if (avail >= need) return {t, avail - need};
  }
  // Unreachable while need <= procs_: every running job ends at some point.
  throw std::logic_error("partition: no reservation for the queue head");
}

void PartitionScheduler::pass_easy() {
  start_in_order();
  // No job can jump ahead when none behind the head fits in what is free
  // (the reservation would only say which of those that fit may).
  if (head_ == queue_.size() || free_ < least_behind_head_) {
    compact();
    return;
  }
  // The head waits; it holds a reservation at the shadow time, and a later
  // job may jump ahead only if it cannot delay that reservation: it ends by
  // then (by its estimate), or it uses processors the head will not need.
  const auto [shadow_time, extra0] = shadow(queue_[head_].job.procs);
  std::int64_t extra = extra0;
  std::size_t out = head_ + 1, i = head_ + 1;
  std::int64_t least = std::numeric_limits<std::int64_t>::max();  // of the jobs that stay
  for (; i < queue_.size() && free_ > 0; ++i) {
    Queued& q = queue_[i];
    if (q.job.procs <= free_) {
      if (now_ + q.job.estimate <= shadow_time) {
        start(q);
        continue;
      }
      if (q.job.procs <= extra) {
        extra -= q.job.procs;
        start(q);
        continue;
      }
    }
    least = std::min(least, q.job.procs);
    if (out != i) queue_[out] = std::move(q);
    ++out;
  }
  // Every job behind the head seen: the bound is exact. Else the jobs not
  // seen keep the old one.
  if (i == queue_.size()) least_behind_head_ = least;
  // Close the gaps the started jobs left; untouched when none started.
  if (out != i) {
    for (; i < queue_.size(); ++i, ++out) queue_[out] = std::move(queue_[i]);
    queue_.resize(out);
  }
  compact();
}

}  // namespace vramsim
