#pragma once
// The workers monitor's status history (reference-semantics section 5), kept
// as idle runs rather than as full samples: for each worker, the first sample
// of its current run of idle samples. A sample costs O(workers whose usage
// changed since the previous one); the scale-down question "which workers
// were idle in every sample since time T" costs O(log n + answer), where a
// history of full samples costs O(samples x workers).
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/id_hash.hpp"
#include "engine/time.hpp"

namespace vramsim {

// One worker in the cluster status: what scale-down reads of it.
struct WorkerUsage {
  std::string node_id;
  std::string job_id;
  double total_cpu = 0, used_cpu = 0, total_gpu = 0, used_gpu = 0;
};

// Idle as the monitor reads it: no CPU used, and no GPU used where the node
// has GPUs (a CPU-only node is idle on its CPU alone).
bool is_idle(const WorkerUsage& w);

class IdleHistory {
 public:
  explicit IdleHistory(std::size_t capacity = 100) : capacity_(capacity == 0 ? 1 : capacity) {}

  // Starts the sample taken at `t` (not before the previous one); the oldest
  // sample beyond the capacity is dropped. Workers keep their last usage
  // until `update` or `remove` says otherwise.
  void begin_sample(SimTime t);
  // A worker's usage in the current sample: a new worker, or one whose usage
  // may have changed. Workers are listed in the order they were first seen.
  void update(const WorkerUsage& w);
  void remove(const std::string& node_id);

  std::size_t samples() const { return times_.size(); }
  std::size_t workers() const { return workers_.size(); }
  // The workers in the current sample, in the order they were first seen.
  std::vector<const WorkerUsage*> current() const;
  // The newest sample strictly older than `before`, if the history holds one.
  std::optional<SimTime> newest_sample_before(SimTime before) const;
  // Workers idle in every sample from the one at `since` (a sample time, as
  // newest_sample_before returns) to the newest, in first-seen order.
  std::vector<const WorkerUsage*> idle_since(SimTime since) const;

 private:
  using IdleRuns = std::set<std::pair<std::uint64_t, std::uint64_t>>;  // (idle_from, order)
  struct Entry;
  using ByOrder = std::map<std::uint64_t, const Entry*>;
  struct Entry {
    WorkerUsage usage;
    std::uint64_t order = 0;                  // first-seen order
    std::optional<std::uint64_t> idle_from;   // sample number where the idle run began
    // Its places in by_order_ and idle_runs_: removed without a search,
    // whose misses grow with the worker count.
    ByOrder::iterator by_order;
    IdleRuns::iterator idle_run;
  };
  std::size_t capacity_;
  std::uint64_t first_sample_ = 0;    // number of times_.front()
  std::deque<SimTime> times_;         // sample times, oldest first
  std::uint64_t next_order_ = 0;
  std::unordered_map<std::string, Entry, IdHash> workers_;
  ByOrder by_order_;
  IdleRuns idle_runs_;
};

}  // namespace vramsim
