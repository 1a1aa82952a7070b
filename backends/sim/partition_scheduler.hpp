#pragma once
// A batch partition's scheduler: jobs ask for a number of processors and
// wait in submit order for them, under strict FCFS or EASY backfilling
// (docs/workloads.md). It decides when each job starts and ends; the caller
// feeds submissions and cancellations and moves time forward, and hears of
// every start and end through callbacks.
//
// Time is an integer in any unit the caller keeps to (`vramsim replay` uses
// seconds). The scheduling pass at time t runs after every completion at t
// and every submission at t, when time moves past t (advance) or on
// flush(); again if a job of zero run time ended at t. Cost: a completion or
// a start is O(log R) (R running jobs), a cancel O(R + Q); a pass is O(1)
// under FCFS and, under EASY, O(k) to find the head job's reservation (k:
// running jobs that must end before it fits) plus O(Q) over the queue,
// stopping early once no processor is free. Memory: O(R + Q), R at its peak.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "backends/sim/scheduler_clock.hpp"
#include "engine/huge_page_allocator.hpp"
#include "engine/slot_table.hpp"

namespace vramsim {

enum class PartitionPolicy { Fcfs, Easy };

// How a job left the partition.
enum class PartitionOutcome { Completed, Timeout, Cancelled };

struct PartitionJob {
  std::int64_t id = 0;        // unique among the jobs not yet ended
  std::int64_t procs = 1;     // 1..the partition's processors
  std::int64_t run_time = 0;  // how long it runs once started (>= 0)
  // What the scheduler is told it will take (the user's request), used for
  // EASY reservations. A running job past it is expected to end now.
  std::int64_t estimate = 0;
  // Killed (Timeout) at start + time_limit if it would run longer; none:
  // never killed.
  std::optional<std::int64_t> time_limit;
};

class PartitionScheduler : public SchedulerClock<PartitionScheduler> {
 public:
  // Called during submit/cancel/advance/flush/drain; they must not call
  // back into the scheduler.
  struct Callbacks {
    std::function<void(const PartitionJob&, std::int64_t start)> on_start;
    std::function<void(const PartitionJob&, std::int64_t end, PartitionOutcome)> on_end;
  };

  // Throws std::invalid_argument on procs < 1.
  PartitionScheduler(std::int64_t procs, PartitionPolicy policy, Callbacks callbacks);

  // Queues a job at `at` (>= now(); time moves to it first). Throws
  // std::invalid_argument on a job that could never run here (procs out of
  // range, negative times) or an id already in the partition.
  void submit(std::int64_t at, const PartitionJob& job);
  // Takes a job out at `at` (>= now()): a waiting one leaves the queue, a
  // running one ends now and frees its processors; on_end reports Cancelled.
  // False if no such job is queued or running.
  bool cancel(std::int64_t at, std::int64_t id);
  // now(), advance(), flush(), drain(), next_completion(): SchedulerClock.

  std::int64_t procs() const { return procs_; }
  std::int64_t free_procs() const { return free_; }
  std::size_t queued() const { return queue_.size() - head_; }
  std::size_t running() const { return running_.size(); }

 private:
  friend class SchedulerClock<PartitionScheduler>;
  struct Queued {
    PartitionJob job;
    std::uint64_t seq = 0;
  };
  // EASY: (start + estimate, seq, procs) of running jobs.
  using Expected = std::pmr::set<std::tuple<std::int64_t, std::uint64_t, std::int64_t>>;
  struct Running {
    PartitionJob job;
    std::uint64_t seq = 0;
    std::int64_t end = 0;  // the real end (run time or limit)
    PartitionOutcome outcome = PartitionOutcome::Completed;
    Expected::iterator expected{};  // EASY: its entry in expected_
  };
  using Slot = SlotTable<Running>::Slot;
  void complete(Slot slot) { finish(slot, running_[slot].outcome); }
  bool is_running(std::uint64_t seq, Slot slot) const { return running_.holds(slot) && running_[slot].seq == seq; }
  void pass();
  void start_in_order();
  void compact();
  void pass_fcfs();
  void pass_easy();
  void start(const Queued& q);
  void finish(Slot slot, PartitionOutcome outcome);
  // EASY: the head job's reservation (shadow time) and the processors left
  // over then for jobs that run past it.
  std::pair<std::int64_t, std::int64_t> shadow(std::int64_t need) const;

  std::int64_t procs_, free_;
  PartitionPolicy policy_;
  Callbacks cb_;
  std::vector<Queued, HugePageAllocator<Queued>> queue_;  // submit order, from head_ on; a replay's may grow long
  std::size_t head_ = 0;
  // EASY: a lower bound on the processors of every job behind the head
  // (exact after a pass that saw them all, lower once one leaves). Every
  // job asks for at least 1, so 1 holds until then, and free_ < it covers
  // free_ == 0.
  std::int64_t least_behind_head_ = 1;
  SlotTable<Running> running_;
  Expected expected_{&pool_};
};

}  // namespace vramsim
