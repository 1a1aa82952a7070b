#pragma once
// The live cluster backend: worker jobs go to a real SLURM through sbatch,
// squeue and scancel (SlurmClient), and nodes are the vramsim-agent processes
// those jobs start, which register with the head over the agent channel
// (AgentServer). Implements ClusterBackend, so the control plane drives it
// exactly as it drives the simulated partition, and records the same trace
// events the simulated partition does (job_submitted, job_started,
// node_advertised, job_cancel_requested, node_stop_requested, job_ended).
//
// squeue is polled; between polls list_jobs() and still_listed() (a cancel
// wait's poll, by lookup: no listing is built) answer from what sbatch,
// scancel and the agents said since. Every submitted job id is written to a
// journal (fsync) before anything else happens, so a head that dies leaves a
// record `vramsim live --cleanup` can act on.
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/cluster_backend.hpp"
#include "backends/slurm/agent_server.hpp"
#include "backends/slurm/job_journal.hpp"
#include "backends/slurm/process_runner.hpp"
#include "backends/slurm/slurm_client.hpp"
#include "engine/executor.hpp"
#include "engine/trace.hpp"
#include "models/advertisement.hpp"
#include "models/worker_sbatch_script.hpp"

namespace vramsim {

struct SlurmBackendConfig {
  std::string run_id;
  std::string journal_path;
  std::string workspace_dir;           // sbatch --chdir; slurm_logs/ below it
  std::string agent_program = "vramsim-agent";
  std::string agent_head_address;      // host:port the agents connect to; empty: agent_head_host and the server's port
  std::string agent_head_host;         // host agents dial; empty: the server's bind address
  std::string secret_file;             // passed to agents by path
  std::string advertisement;           // the advertisement variant agents compute with
  Duration agent_heartbeat = 0;        // wall; 0: the agent's default
  double agent_connect_timeout_s = 0;  // wall seconds an agent tries to reach the head; 0: the agent's default
  std::chrono::milliseconds squeue_poll{2000};  // wall time between squeue calls
  // Wall seconds per scenario second: every SLURM-facing duration (the
  // script's --time) is scaled by it, as the scenario's clock is.
  double time_scale = 1.0;
  // The site's settings (vramsim live --partition, --account, ...): each one
  // given replaces the scenario's for every worker job.
  SlurmJobOptions site;
  // Worker jobs that end before their agent ever registered, in a row:
  // each next sbatch waits failure_backoff, doubled per failure, and after
  // max_failed_starts of them the run stops submitting (the error says why).
  int max_failed_starts = 5;
  std::chrono::milliseconds failure_backoff{2000};
  // The poll is a few seconds, kind to a shared controller; while a job of
  // the run is about to change state (submitted and not yet seen running,
  // stopped or cancelled and still listed), squeue runs every
  // squeue_watch_poll instead, for at most squeue_watch_window after the
  // sbatch, stop or scancel: the moment SLURM starts or clears the job is
  // then seen within one quick squeue, not one squeue_poll. 0: off.
  std::chrono::milliseconds squeue_watch_poll{250};
  std::chrono::milliseconds squeue_watch_window{10000};
  // A controller that does not answer (squeue failing after its retries)
  // for up to this long is an outage the run waits out: no sbatch is sent
  // meanwhile (the scale-ups wait), cancellations that failed are sent
  // again once it answers, and the trace records the outage's start and
  // end (slurm_outage). Longer than this, the run ends (exit 5).
  std::chrono::milliseconds outage_tolerance{300000};
  slurm::SlurmClientConfig client;
  slurm::AgentServerConfig server;
  // Emulated latencies (vramsim live --emulate-boot): wall seconds an agent
  // waits before registering and, after a drain, before its job ends. Drawn
  // once per job at submission; unset: the real ones only.
  std::function<double()> startup_delay_s, exit_delay_s;
  // Ray's accelerator type for a device name ("NVIDIA A100-SXM4-40GB" -> "A100").
  std::function<std::string(const std::string&)> accelerator_type;
};

class SlurmBackend final : public ClusterBackend, private slurm::AgentServerListener {
 public:
  SlurmBackend(boost::asio::io_context& io, Executor& exec, TraceRecorder& trace,
               std::shared_ptr<const AdvertisementPolicy> advertisement, SlurmBackendConfig cfg);
  ~SlurmBackend() override;

  void submit_worker(const WorkerJobSize& size, SubmitDone done) override;
  void cancel_jobs(const std::vector<std::string>& job_ids) override;
  std::vector<JobInfo> list_jobs() const override;
  std::vector<std::string> still_listed(const std::vector<std::string>& job_ids) const override;
  void stop_node(const std::string& job_id) override;
  void start_replica(const ReplicaStart& r, StartDone done) override;
  void stop_replica(const std::string& job_id, const std::string& replica) override;
  void call_replica(const std::string& job_id, const std::string& replica, const Json& payload,
                    CallDone done) override;
  bool measures_memory() const override { return true; }
  std::optional<DeviceObservation> observed_memory(const std::string& job_id, int device) const override;

  unsigned short agent_port() const { return server_.port(); }
  // HOST:PORT the worker jobs' agents dial.
  std::string agent_head() const;
  // The script sbatch gets for a worker of this size.
  std::string worker_script(const WorkerJobSize& size) const;
  // Stops polling and closes the agent channel (agents then exit).
  void close();
  // Job ids submitted by this run and not yet seen gone.
  std::vector<std::string> live_job_ids() const;
  // Those of them that are on their way out: cancelled, drained, or
  // COMPLETING. A job the control plane left alone (a legacy shutdown's
  // pending job) is not: it stays until someone cancels it.
  std::vector<std::string> leaving_job_ids() const;
  // Called with a one-line error when SLURM stays unreachable after retries.
  std::function<void(const std::string&)> on_fatal;
  // Jobs of the run still pending, with SLURM's reason ("Resources",
  // "QOSMaxGRESPerUser", ...), for the live status.
  std::vector<std::pair<std::string, std::string>> pending_reasons() const;
  // The last line the agent of a job wrote to the job's error log
  // (WORKDIR/slurm_logs/ray_worker_ID.err, on the shared filesystem):
  // why an agent that never connected gave up. "" when there is none.
  std::string agent_log_reason(const std::string& job_id) const;

 protected:
  std::int64_t serve_sleep_us(double work_us) const override;

 private:
  struct Job {
    WorkerJobSize size;
    JobState state = JobState::Pending;
    bool started_traced = false, registered = false, cancel_requested = false, ended = false;
    bool ever_registered = false, stop_requested = false;
    bool gone = false;  // left squeue's active states; its ending is being looked up
    std::string host, pending_reason, goodbye;
    std::map<int, DeviceObservation> memory;
    std::chrono::steady_clock::time_point watch_until{};  // quick polls until then (squeue_watch_poll)
  };
  struct PendingStart { std::string job_id, replica; StartDone done; };
  struct PendingCall { std::string job_id; CallDone done; };

  void poll();
  void arm_poll(std::chrono::milliseconds delay);
  void watch(Job& j);
  std::chrono::milliseconds next_poll_delay() const;
  void job_seen_running(const std::string& id, Job& j, const std::string& host);
  void job_left_queue(const std::string& id, Job& j);
  void job_ended(const std::string& id, Job& j, const std::optional<slurm::JobEnding>& ending,
                 const std::string& lookup_error);
  std::string ending_reason(const std::string& id, const Job& j, const slurm::JobEnding& e) const;
  void count_start_outcome(const Job& j, const std::string& reason);
  void sbatch_worker(const WorkerJobSize& size, SubmitDone done);
  void fail_node_requests(const std::string& job_id, const std::string& error);

  // AgentServerListener
  bool known_job(const std::string& job_id) override;
  void agent_registered(const slurm::AgentRegistration& r) override;
  void agent_heartbeat(const std::string& job_id, const std::vector<slurm::DeviceUsage>& devices) override;
  void replica_started(const std::string& job_id, const slurm::ReplicaStarted& r) override;
  void call_result(const std::string& job_id, std::uint64_t call_id, const Json& result) override;
  void agent_gone(const std::string& job_id, const std::string& reason) override;
  void refused(const std::string& peer, const std::string& reason) override;

  Executor& exec_;
  TraceRecorder& trace_;
  std::shared_ptr<const AdvertisementPolicy> advertisement_;
  SlurmBackendConfig cfg_;
  slurm::ProcessRunner runner_;
  slurm::SlurmClient client_;
  slurm::AgentServer server_;
  std::unique_ptr<slurm::JobJournal> journal_;
  std::map<std::string, Job> jobs_;
  std::vector<PendingStart> starts_;
  std::map<std::uint64_t, PendingCall> calls_;
  std::uint64_t next_call_ = 1;
  boost::asio::steady_timer poll_timer_;
  bool poll_in_flight_ = false, closed_ = false;
  std::set<std::string> polled_once_;  // jobs an squeue has run after the submission of
  std::uint64_t submissions_ = 0;       // sbatch calls made: the n of each job's comment
  int submits_in_flight_ = 0;           // sbatch calls not answered yet
  std::uint64_t submit_generation_ = 0; // bumped at every sbatch call and answer
  std::set<std::string> orphans_cancelled_;  // jobs of the run no sbatch answered with
  struct HeldSubmission { WorkerJobSize size; SubmitDone done; };
  // scancel of jobs of the run; a failure is traced and the jobs are sent
  // again when the controller next answers.
  void scancel(std::vector<std::string> ids);
  void outage_failure(const std::string& command, const std::string& error,
                      std::chrono::steady_clock::time_point sent);
  void outage_over();
  std::optional<std::chrono::steady_clock::time_point> outage_since_;  // when the first failed squeue of an outage was sent
  std::vector<HeldSubmission> held_for_outage_;  // scale-ups waiting for the controller
  std::set<std::string> cancels_to_resend_;      // scancel failed during an outage
  int failed_starts_ = 0;                     // in a row (max_failed_starts)
  std::string last_start_failure_;
  std::vector<std::shared_ptr<boost::asio::steady_timer>> held_submissions_;  // waiting out failure_backoff
};

}  // namespace vramsim
