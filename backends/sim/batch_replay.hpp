#pragma once
// Replays a batch trace on a partition of N processors under FCFS or EASY
// (backends/sim/partition_scheduler.hpp): each job starts when the
// scheduler lets it and runs for its recorded run time. `vramsim replay`
// prints the result; docs/workloads.md gives the rules for which jobs are
// replayed and how.
#include <cstdint>
#include <optional>
#include <iosfwd>
#include <string>
#include <vector>

#include "backends/sim/partition_scheduler.hpp"
#include "engine/huge_page_allocator.hpp"
#include "workload/swf.hpp"

namespace vramsim {

// One job as replayed: in the trace's ticks (ReplayResult::ticks_per_second),
// the trace's id.
struct ReplayedJob {
  std::int64_t id = 0, submit = 0, start = 0, end = 0;
  std::int64_t procs = 0;
  std::int64_t recorded_wait = -1;  // the trace's wait, -1 unknown
  bool timed_out = false;           // killed at its requested time
};

// EASY's estimate of a job (docs/workloads.md, "Estimates"). Where the job
// states a requested time that is the estimate under every rule but
// `runtime`; where it states none:
//   requested    its run time (perfect foresight: counted as such)
//   runtime      always its run time, even where it states one
//   user-median  `factor` x the median run time of the user's jobs
//                submitted before it (its run time for a user's first job)
//   limit        `limit_s`, the partition's time limit
struct EstimateRule {
  enum class Kind { Requested, Runtime, UserMedian, Limit };
  Kind kind = Kind::Requested;
  double factor = 1.0;
  std::int64_t limit_s = 0;
};
// Parses "requested", "runtime", "user-median:K" (K in (0, 1000]) or
// "limit:D" (D a duration such as 4h, or seconds); nullopt with `error` set.
std::optional<EstimateRule> parse_estimate_rule(const std::string& text, std::string& error);

// Where each job's estimate came from.
struct EstimateCounts {
  std::size_t requested = 0, run_time = 0, user_median = 0, limit = 0;
};

struct ReplayResult {
  std::int64_t procs = 0;
  PartitionPolicy policy = PartitionPolicy::Fcfs;
  std::vector<ReplayedJob, HugePageAllocator<ReplayedJob>> jobs;  // in the trace's order
  bool kill_at_req_time = false;  // as the trace asked (Batsim walltimes)
  std::size_t skipped_no_run_time = 0, skipped_no_procs = 0, skipped_too_wide = 0;
  std::size_t partial_lines = 0;  // status 2-4 lines of the trace: not jobs
  std::optional<std::int64_t> log_max_procs, log_max_nodes;  // the log's machine (its header)
  std::int64_t ticks_per_second = 1;  // the trace's unit: 1 (seconds) or 1000 (ms)
  EstimateRule estimate_rule;
  EstimateCounts estimates;
  std::size_t skipped() const { return skipped_no_run_time + skipped_no_procs + skipped_too_wide; }
};

// The replay against the log, job by job, over the jobs whose wait the log
// records: the mean absolute error of the simulated wait, the Pearson
// correlation of the two waits (none when either does not vary), and the
// mean bounded slowdown of each, max(1, (wait + run) / max(run, 10 s)).
struct LogComparison {
  std::size_t jobs = 0;
  double mean_abs_error_s = 0;
  std::optional<double> correlation;
  double bounded_slowdown_sim = 0, bounded_slowdown_log = 0;
};
LogComparison compare_with_log(const ReplayResult& r);

// Throws std::invalid_argument on procs < 1. Where the trace says so
// (kill_at_req_time), a job running past its requested time is killed then.
ReplayResult replay_swf(const SwfTrace& trace, std::int64_t procs, PartitionPolicy policy,
                        EstimateRule estimate = {});

// `job_id,submit,start,end`, one row per replayed job, in the trace's order.
void write_jobs_csv(const ReplayResult& r, std::ostream& out);
// The summary: jobs replayed and skipped, simulated vs recorded waits,
// utilisation.
void print_replay_summary(const ReplayResult& r, const std::string& trace_name, std::ostream& out);

}  // namespace vramsim
