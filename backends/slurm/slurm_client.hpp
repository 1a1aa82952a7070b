#pragma once
// The SLURM command-line client of live mode: sbatch, squeue and scancel run
// through a ProcessRunner on the Asio loop, each with a timeout, transient
// failures retried with a doubling backoff. Formats and the retry policy are
// documented in docs/live-slurm.md.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "backends/slurm/process_runner.hpp"
#include "engine/lifecycle.hpp"

namespace vramsim::slurm {

// One line of squeue.
struct SqueueJob {
  std::string id, name, state, comment;
  JobState job_state = JobState::Pending;  // `state` mapped onto the job lifecycle
  std::string reason;                      // %r: why it is pending ("None" when not)
  std::string nodes;                       // %N: the allocated nodes, "" while pending
};

// How a job that left the queue ended, as SLURM's own records tell it.
struct JobEnding {
  std::string slurm_state;  // SLURM's name: TIMEOUT, NODE_FAIL, CANCELLED, ...
  JobState state = JobState::Completed;  // slurm_state on the lifecycle
  std::string reason;       // SLURM's reason ("TimeLimit", "NodeDown", "None"), or "by UID" after CANCELLED
  std::string exit_code;    // "EXIT:SIGNAL", "" where not told
  std::string source;       // "sacct" or "scontrol"
};

struct SlurmClientConfig {
  std::string sbatch = "sbatch", squeue = "squeue", scancel = "scancel";
  std::string sacct = "sacct", scontrol = "scontrol";
  // squeue --user; empty: the user running the head (squeue --me does the
  // same from 20.11 on; --user works on every version).
  std::string user;
  // A user's own settings for these commands (SQUEUE_PARTITION, SBATCH_QOS,
  // ...) would change what they submit or show, so none reaches them;
  // SLURM_CONF and the rest of the environment do.
  std::vector<std::string> unset_env_prefixes = {"SQUEUE_", "SBATCH_", "SCANCEL_", "SACCT_",
                                                 "SCONTROL_", "SINFO_", "SALLOC_", "SRUN_"};
  std::chrono::milliseconds timeout{10000};  // per attempt
  int attempts = 4;
  std::chrono::milliseconds backoff{250};  // before the 2nd attempt; doubles each retry
  std::vector<std::pair<std::string, std::string>> env;  // added to the inherited environment
};

// squeue's state names onto the lifecycle: PENDING, CONFIGURING, REQUEUED,
// RESIZING -> Pending; RUNNING, SUSPENDED, STOPPED, SIGNALING -> Running;
// COMPLETING, STAGE_OUT -> Completing; COMPLETED -> Completed; CANCELLED,
// REVOKED -> Cancelled; TIMEOUT, DEADLINE -> Timeout; FAILED, NODE_FAIL,
// BOOT_FAIL, OUT_OF_MEMORY, PREEMPTED, SPECIAL_EXIT -> Failed.
std::optional<JobState> job_state_from_squeue(const std::string& state);

// `scontrol show job --oneliner ID`: JobState=, Reason=, ExitCode=.
std::optional<JobEnding> parse_scontrol_job(const std::string& out);
// `sacct -X -n -P -j ID -o JobIDRaw,State,ExitCode,Reason`: the line of ID.
std::optional<JobEnding> parse_sacct_job(const std::string& out, const std::string& id);
// The user name squeue --user gets for this process ("" when unknown: then
// the numeric uid).
std::string current_user();

// Parses `sbatch --parsable` output: "123" or "123;cluster".
std::optional<std::string> parse_sbatch_output(const std::string& out);
// Parses the output of the squeue format below; an error names the line.
std::optional<std::vector<SqueueJob>> parse_squeue_output(const std::string& out, std::string& error);
// The --format argument list() passes: fields separated by the ASCII unit
// separator (0x1f), which job names and comments do not contain; the comment
// comes last.
extern const char* const kSqueueFormat;
// The --states argument of list(): every state of a job that still holds or
// waits for resources. Explicit, so SQUEUE_STATES in the environment cannot
// hide a job.
extern const char* const kSqueueStates;

// The --comment of a run's n-th worker job, "<run id>#<n>": unique per
// submission (SlurmClient::submit looks a lost submission up by it), and
// still naming the run (run ids hold no '#').
std::string job_comment(const std::string& run_id, std::uint64_t n);
// Whether a job with this comment belongs to the run: "<run id>" or
// "<run id>#...".
bool comment_of_run(const std::string& comment, const std::string& run_id);

// Whether a failed command is worth retrying: a timeout, or an error text of
// an unreachable or overloaded controller.
bool is_transient(const CommandResult& r);

// Callbacks run on the loop, never inside the call. The runner and the
// io_context must outlive the client; a client destroyed mid-retry drops the
// pending retry and its callback.
class SlurmClient {
 public:
  SlurmClient(boost::asio::io_context& io, ProcessRunner& runner, SlurmClientConfig cfg);

  // sbatch --parsable --comment=<comment>, the script on stdin. The comment
  // should name this one submission: when an sbatch fails in a way that may
  // have queued the job anyway (a timeout, a lost reply), the job is looked
  // for by its comment before sbatch runs again, so a retry never queues a
  // second copy; where squeue cannot tell either, the submission fails.
  void submit(const std::string& script, const std::string& comment,
              std::function<void(std::optional<std::string> job_id, std::string error)> done);
  // squeue --me --noheader --states=<kSqueueStates> --format=<kSqueueFormat>:
  // every active job of the user; callers filter by name or comment.
  void list(std::function<void(std::optional<std::vector<SqueueJob>> jobs, std::string error)> done);
  // scancel <ids...>; ids SLURM no longer knows count as cancelled. No ids:
  // succeeds without running anything.
  void cancel(const std::vector<std::string>& ids, std::function<void(bool ok, std::string error)> done);
  // How a job that left the queue ended: sacct where accounting is kept
  // (tried once; a cluster without it is remembered), else scontrol show
  // job (which knows a job for MinJobAge after it ends). Nothing: neither
  // could tell, `error` says why.
  void ending(const std::string& id, std::function<void(std::optional<JobEnding> ending, std::string error)> done);

  const SlurmClientConfig& config() const { return cfg_; }

 private:
  // What a before_retry hook decides after a transient failure: both empty,
  // go on (the next attempt after the backoff, or the failure when the
  // attempts are spent); `found` set, the call succeeds with it; `error` set,
  // the call fails with it.
  struct RetryVerdict {
    std::optional<std::string> found;
    std::string error;
  };
  // Called after every transient failure, the last attempt's too; it calls
  // `decide` exactly once, on the loop.
  using BeforeRetry = std::function<void(const CommandResult& failed, std::function<void(RetryVerdict)> decide)>;
  // How a call through run_with_retry ended: the last result; `error`, one
  // line, when it failed; `found` when before_retry ended it.
  struct Attempted {
    CommandResult result;
    std::string error;
    std::optional<std::string> found;
  };
  // The one retry loop: runs argv up to cfg_.attempts times while it fails
  // transiently, waiting cfg_.backoff before the 2nd attempt and doubling
  // it each retry.
  void run_with_retry(std::vector<std::string> argv, std::string stdin_data, BeforeRetry before_retry,
                      std::function<void(Attempted)> done);

  boost::asio::io_context& io_;
  ProcessRunner& runner_;
  SlurmClientConfig cfg_;
  void ending_from_scontrol(const std::string& id, std::string sacct_error,
                            std::function<void(std::optional<JobEnding>, std::string)> done);

  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  bool sacct_usable_ = true;  // false once sacct said accounting is off, or is missing
};

}  // namespace vramsim::slurm
