#pragma once
// `vramsim live --cleanup RUN_ID`: cancels what a run left in SLURM, found by
// the run id in the job comment and by the run's job journal.
#include <chrono>
#include <string>
#include <vector>

#include "backends/slurm/slurm_client.hpp"

namespace vramsim::slurm {

struct CleanupReport {
  std::vector<std::string> found;         // listed jobs of the run (comment or journal)
  std::vector<std::string> cancelled;     // found and cancelled
  std::vector<std::string> still_listed;  // still in squeue when the wait ended
  std::string error;                      // one line; empty when all went well
  bool ok() const { return error.empty() && still_listed.empty(); }
};

// Runs its own io_context. Lists the user's jobs, takes those whose comment
// equals run_id plus the journal's ids of run_id that are still listed (the
// journal may be "" or missing), scancels them and polls squeue every 500 ms
// until none is listed or `wait` has passed. A malformed journal is reported
// in `error` and the jobs found by comment are still cancelled.
CleanupReport cleanup_run(const std::string& run_id, const std::string& journal_path,
                          const SlurmClientConfig& cfg,
                          std::chrono::seconds wait = std::chrono::seconds(60));

}  // namespace vramsim::slurm
