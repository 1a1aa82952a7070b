#pragma once
// What `sweep` and `plan` share on the command line: an output file that is
// replaced only once complete, SIGINT/SIGTERM as a flag, and a SLURM job
// array submitted, waited for (one squeue per poll) and cancelled on an
// interrupt.
#include <csignal>
#include <cstddef>
#include <map>
#include <string>

#include "engine/output_file.hpp"
#include "runner/sweep_parts.hpp"

namespace vramsim {

// The whole of a file; `ok` says whether it could be read to its end.
std::string read_whole_file(const std::string& path, bool& ok);

// SIGINT and SIGTERM set a flag while this lives; the old handlers come back after.
class InterruptFlag {
 public:
  InterruptFlag();
  ~InterruptFlag();
  InterruptFlag(const InterruptFlag&) = delete;
  InterruptFlag& operator=(const InterruptFlag&) = delete;
  bool raised() const;

 private:
  void (*old_int_)(int) = SIG_DFL;
  void (*old_term_)(int) = SIG_DFL;
};

// The end of a job array: every task left squeue, sbatch or squeue failed,
// or an interrupt cancelled it.
struct ArrayOutcome {
  enum class Status { Ended, Failed, Interrupted } status = Status::Failed;
  std::string job;    // the array's job id, once submitted
  std::string error;  // with Failed: what sbatch, squeue or scancel said
  // With track_tasks: the tasks whose final state sacct or scontrol told.
  std::map<std::size_t, TaskEnding> endings;
};
// Submits `script` with --comment `token` (which tells the array from every
// other job), says "WHO: WHAT as SLURM array job ID" and then its tasks on
// stderr, waits until
// squeue lists none of them (one squeue every `poll_s` seconds), and
// cancels it when `interrupt` is raised. With `track_tasks`, each time the
// array's lines in squeue change and once it has left, the tasks' final
// states are asked of sacct (until it fails: no accounting) and of scontrol
// (which forgets a job MinJobAge after it ends); a task neither told of is
// left out of `endings`.
ArrayOutcome run_job_array(const std::string& script, const std::string& token, double poll_s, const std::string& who,
                           const std::string& what, const InterruptFlag& interrupt, bool track_tasks = false);

}  // namespace vramsim
