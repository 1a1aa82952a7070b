#pragma once
// A batch partition of nodes with cores, memory and GPUs (SLURM's
// consumable resources, GPUs as gres): a job asks for k nodes and, on each,
// some cores, memory and GPUs; nodes are shared by jobs while resources
// last. Jobs wait in submit order under strict FCFS or EASY backfilling,
// as in PartitionScheduler (which is the one-node case of this one), with
// the same calls, event order and time unit; docs/workloads.md gives the
// rules.
//
// Placement is first fit: the lowest-numbered nodes with the asked share
// free. Cost: placing a job is O(N) (N nodes); an EASY pass is O(k * N) to
// find the head's reservation (k: groups of running jobs that end before it
// fits) plus O(Q * N) over the queue. Memory: O(N + R + Q). Meant for
// partitions of up to some thousands of nodes.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "backends/sim/partition_scheduler.hpp"

namespace vramsim {

// A node's capacity, or what a job asks for on each of its nodes.
struct NodeShape {
  std::int64_t cpus = 0, mem_mb = 0, gpus = 0;
  bool operator==(const NodeShape&) const = default;
};

struct NodeJob {
  std::int64_t id = 0;     // unique among the jobs not yet ended
  std::int64_t nodes = 1;  // how many distinct nodes
  NodeShape per_node;      // asked on each of them
  std::int64_t run_time = 0, estimate = 0;  // as in PartitionJob
  std::optional<std::int64_t> time_limit;
};

class NodeScheduler : public SchedulerClock<NodeScheduler> {
 public:
  // Called during submit/cancel/advance/flush/drain; they must not call
  // back into the scheduler. `nodes`: the indexes the job holds.
  struct Callbacks {
    std::function<void(const NodeJob&, std::int64_t start, const std::vector<std::size_t>& nodes)> on_start;
    std::function<void(const NodeJob&, std::int64_t end, PartitionOutcome)> on_end;
  };

  // Throws std::invalid_argument on no node or a negative capacity.
  NodeScheduler(std::vector<NodeShape> nodes, PartitionPolicy policy, Callbacks callbacks);

  // As PartitionScheduler; a job that could not run even on the empty
  // partition (too many nodes, too large a share) is std::invalid_argument.
  void submit(std::int64_t at, const NodeJob& job);
  bool cancel(std::int64_t at, std::int64_t id);
  // now(), advance(), flush(), drain(), next_completion(): SchedulerClock.

  const NodeShape& free(std::size_t node) const { return free_.at(node); }
  std::size_t queued() const { return queue_.size(); }
  std::size_t running() const { return running_.size(); }

 private:
  friend class SchedulerClock<NodeScheduler>;
  struct Queued {
    NodeJob job;
    std::uint64_t seq = 0;
  };
  struct Running {
    NodeJob job;
    std::uint64_t seq = 0;
    std::vector<std::size_t> nodes;
    std::int64_t start = 0, end = 0;
    PartitionOutcome outcome = PartitionOutcome::Completed;
  };
  using Slot = SlotTable<Running>::Slot;
  void complete(Slot slot) { finish(slot, running_[slot].outcome); }
  bool is_running(std::uint64_t seq, Slot slot) const { return running_.holds(slot) && running_[slot].seq == seq; }
  void pass();
  void start(const Queued& q, std::vector<std::size_t> nodes);
  void finish(Slot slot, PartitionOutcome outcome);

  std::vector<NodeShape> capacity_, free_;
  PartitionPolicy policy_;
  Callbacks cb_;
  std::vector<Queued> queue_;  // submit order
  SlotTable<Running> running_;
  // EASY: (start + estimate, seq, slot) of running jobs.
  std::pmr::set<std::tuple<std::int64_t, std::uint64_t, Slot>> expected_{&pool_};
};

}  // namespace vramsim
