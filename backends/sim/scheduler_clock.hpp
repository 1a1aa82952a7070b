#pragma once
// The clock both partition schedulers share: completions ordered by (time,
// submission), a pending scheduling pass, and the order in which time moves
// (docs/workloads.md): at each time, every completion first, then one pass
// that sees them all, before time moves on. `Derived` keeps its running jobs
// in a SlotTable (engine/slot_table.hpp) and supplies pass(), complete(slot)
// (the job there reaches its real end) and is_running(seq, slot).
#include <algorithm>
#include <cstdint>
#include <memory_resource>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/node_pool.hpp"

namespace vramsim {

template <class Derived>
class SchedulerClock {
 public:
  std::int64_t now() const { return now_; }
  // The earliest pending completion, if any job runs.
  std::optional<std::int64_t> next_completion() const {
    drop_stale_ends();
    if (ends_.empty()) return std::nullopt;
    return ends_.front().time;
  }
  // Processes every event up to `until` (>= now()); the pass at `until`
  // itself waits for flush() or a later advance.
  void advance(std::int64_t until) {
    if (until < now_) throw std::invalid_argument("partition: advance into the past");
    move_to(until);
  }
  // Runs the pending pass at now(), if any.
  void flush() {
    if (pass_pending_) self().pass();
  }
  // Advances until no job is queued or running.
  void drain() {
    for (;;) {
      flush();
      const auto next = next_completion();
      if (!next) break;
      move_to(*next);
    }
  }

 protected:
  // What every submission checks and gets, after the scheduler's own checks
  // of the job's size: times >= 0, time moved to `at`, an id not already
  // queued or running; returns its seq. The job then waits for a pass.
  template <class Job>
  std::uint64_t enter(std::int64_t at, const Job& job) {
    if (job.run_time < 0 || job.estimate < 0 || (job.time_limit && *job.time_limit < 0))
      throw std::invalid_argument(who(job.id) + "expected times >= 0");
    move_to(at);
    const std::uint64_t seq = seq_++;
    if (!ids_.emplace(job.id, seq).second) throw std::invalid_argument(who(job.id) + "already queued or running");
    pass_pending_ = true;
    return seq;
  }
  // How a message names a job; built only for a message.
  static std::string who(std::int64_t id) { return "partition: job " + std::to_string(id) + ": "; }
  // A cancellation at `at`: time moved there; the job's entry in ids_, or
  // ids_.end() when it is neither queued nor running.
  std::pmr::unordered_map<std::int64_t, std::uint64_t>::iterator find_to_cancel(std::int64_t at, std::int64_t id) {
    if (at < now_) throw std::invalid_argument("partition: cancel in the past");
    move_to(at);
    return ids_.find(id);
  }

  // The job of `seq`, running in `slot` of the derived scheduler's table,
  // starts: its real end joins the heap.
  void end_at(std::int64_t end, std::uint64_t seq, std::uint32_t slot) {
    ends_.push_back({end, seq, slot});
    std::push_heap(ends_.begin(), ends_.end(), later);
  }
  // A running job ends before its end (a cancel): its entry stays in the
  // heap, and is dropped when it comes to the top.
  void ended_early() { ++stale_ends_; }

  void move_to(std::int64_t t) {
    for (;;) {
      drop_stale_ends();
      if (!ends_.empty() && ends_.front().time <= t) {
        const std::int64_t e = ends_.front().time;
        // The pass at now sees all of now's events before time moves on.
        if (e > now_ && pass_pending_) {
          self().pass();
          continue;
        }
        now_ = e;
        for (; !ends_.empty() && ends_.front().time == e; drop_stale_ends()) {
          const std::uint32_t slot = ends_.front().slot;
          std::pop_heap(ends_.begin(), ends_.end(), later);
          ends_.pop_back();
          self().complete(slot);
        }
        pass_pending_ = true;
        continue;
      }
      if (t > now_ && pass_pending_) {
        self().pass();
        continue;
      }
      break;
    }
    now_ = std::max(now_, t);
  }

  std::int64_t now_ = 0;
  bool pass_pending_ = false;
  // The node containers here and in the scheduler draw their nodes from one
  // pool, freed nodes reused: a job's entries cost no heap call of their own
  // (a KTH-SP2 replay: 117.6k heap allocations before, 3.7k after).
  NodePool pool_;
  // Real ends of running jobs: a min-heap by (end, seq) (seq numbers the
  // submissions, so no two entries tie), and how many of
  // its entries belong to jobs that ended early.
  struct End {
    std::int64_t time;
    std::uint64_t seq;
    std::uint32_t slot;  // where the job runs, while it does
  };
  // The heap's order, as a type (not a function pointer) so that it inlines.
  struct Later {
    bool operator()(const End& a, const End& b) const { return a.time != b.time ? a.time > b.time : a.seq > b.seq; }
  };
  static constexpr Later later{};
  mutable std::vector<End> ends_;
  mutable std::size_t stale_ends_ = 0;
  std::uint64_t seq_ = 0;
  std::pmr::unordered_map<std::int64_t, std::uint64_t> ids_{&pool_};  // id -> seq, queued or running

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
  const Derived& self() const { return static_cast<const Derived&>(*this); }
  void drop_stale_ends() const {
    if (stale_ends_) drop_stale_ends_now();
  }
  void drop_stale_ends_now() const {
    while (stale_ends_ && !ends_.empty() && !self().is_running(ends_.front().seq, ends_.front().slot)) {
      std::pop_heap(ends_.begin(), ends_.end(), later);
      ends_.pop_back();
      --stale_ends_;
    }
  }
};

}  // namespace vramsim
