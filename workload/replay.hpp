#pragma once
// Replays a batch trace on a partition of N processors under FCFS or EASY
// (backends/sim/partition_scheduler.hpp): each job starts when the
// scheduler lets it and runs for its recorded run time. `vramsim replay`
// prints the result; docs/workloads.md gives the rules for which jobs are
// replayed and how.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "backends/sim/partition_scheduler.hpp"
#include "workload/swf.hpp"

namespace vramsim {

// One job as replayed: whole seconds, the trace's id.
struct ReplayedJob {
  std::int64_t id = 0, submit = 0, start = 0, end = 0;
  std::int64_t procs = 0;
  std::int64_t recorded_wait = -1;  // the trace's wait, -1 unknown
  bool timed_out = false;           // killed at its requested time
};

struct ReplayResult {
  std::int64_t procs = 0;
  PartitionPolicy policy = PartitionPolicy::Fcfs;
  std::vector<ReplayedJob> jobs;  // in the trace's order
  bool kill_at_req_time = false;  // as the trace asked (Batsim walltimes)
  std::size_t skipped_no_run_time = 0, skipped_no_procs = 0, skipped_too_wide = 0;
  std::size_t skipped() const { return skipped_no_run_time + skipped_no_procs + skipped_too_wide; }
};

// Throws std::invalid_argument on procs < 1. Where the trace says so
// (kill_at_req_time), a job running past its requested time is killed then.
ReplayResult replay_swf(const SwfTrace& trace, std::int64_t procs, PartitionPolicy policy);

// `job_id,submit,start,end`, one row per replayed job, in the trace's order.
void write_jobs_csv(const ReplayResult& r, std::ostream& out);
// The summary: jobs replayed and skipped, simulated vs recorded waits,
// utilisation.
void print_replay_summary(const ReplayResult& r, const std::string& trace_name, std::ostream& out);

}  // namespace vramsim
