#include "backends/slurm/slurm_backend.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include "engine/format.hpp"

namespace vramsim {

namespace {
// The agents prove this run's id: the server checks the one the jobs carry.
slurm::AgentServerConfig server_config(slurm::AgentServerConfig c, const std::string& run_id) {
  if (c.run_id.empty()) c.run_id = run_id;
  return c;
}
}  // namespace

SlurmBackend::SlurmBackend(boost::asio::io_context& io, Executor& exec, TraceRecorder& trace,
                           std::shared_ptr<const AdvertisementPolicy> advertisement, SlurmBackendConfig cfg)
    : exec_(exec), trace_(trace), advertisement_(std::move(advertisement)), cfg_(std::move(cfg)),
      runner_(io), client_(io, runner_, cfg_.client), server_(io, server_config(cfg_.server, cfg_.run_id), *this), poll_timer_(io) {
  if (!cfg_.journal_path.empty()) journal_ = std::make_unique<slurm::JobJournal>(cfg_.journal_path);
  arm_poll(std::chrono::milliseconds(0));
}

SlurmBackend::~SlurmBackend() { close(); }

void SlurmBackend::close() {
  if (closed_) return;
  closed_ = true;
  poll_timer_.cancel();
  for (auto& t : held_submissions_) t->cancel();
  held_submissions_.clear();
  server_.close();
}

std::string SlurmBackend::agent_head() const {
  if (!cfg_.agent_head_address.empty()) return cfg_.agent_head_address;
  std::string host = cfg_.agent_head_host.empty() ? cfg_.server.bind : cfg_.agent_head_host;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";  // an IPv6 address
  return host + ":" + std::to_string(server_.port());
}

std::string SlurmBackend::worker_script(const WorkerJobSize& scenario_size) const {
  // The scenario's time limit on the wall clock: at --time-scale 0.05 a
  // 4-hour limit is 12 minutes, so the job lives as long as the scenario
  // says, in the scenario's time.
  WorkerJobSize size = scenario_size;
  size.time_limit = static_cast<Duration>(std::ceil(static_cast<double>(size.time_limit) * cfg_.time_scale));
  for (auto [given, into] : {std::pair<const std::string*, std::string*>{&cfg_.site.partition, &size.slurm.partition},
                             {&cfg_.site.account, &size.slurm.account},
                             {&cfg_.site.qos, &size.slurm.qos},
                             {&cfg_.site.gpu_type, &size.slurm.gpu_type},
                             {&cfg_.site.constraint, &size.slurm.constraint},
                             {&cfg_.site.reservation, &size.slurm.reservation}})
    if (!given->empty()) *into = *given;
  SbatchOptions o;
  o.workspace_dir = cfg_.workspace_dir;
  const std::string head = agent_head();
  o.head_address = head;
  std::string cmd = cfg_.agent_program + " --head " + head + " --secret-file " + cfg_.secret_file + " --run-id " +
                    cfg_.run_id + " --advertisement " + cfg_.advertisement + " --num-cpus " +
                    std::to_string(size.cpus) + " --num-gpus " + std::to_string(size.gpus);
  if (cfg_.agent_heartbeat > 0) cmd += " --heartbeat " + format_seconds(cfg_.agent_heartbeat);
  if (cfg_.agent_connect_timeout_s > 0) cmd += " --connect-timeout " + format_number(cfg_.agent_connect_timeout_s);
  auto wall = [](double s) { return format_number(std::round(s * 1000.0) / 1000.0); };
  if (cfg_.startup_delay_s) cmd += " --startup-delay " + wall(cfg_.startup_delay_s());
  if (cfg_.exit_delay_s) {
    const double exit = cfg_.exit_delay_s();
    cmd += exit < 0 ? std::string(" --stay-after-drain") : " --exit-delay " + wall(exit);
  }
  o.start_command = cmd;
  return render_sbatch_script(size, *advertisement_, o);
}

void SlurmBackend::submit_worker(const WorkerJobSize& size, SubmitDone done) {
  // Jobs whose agent never connected, in a row: no more sbatch after the
  // bound, a doubling wait before each sbatch until then.
  if (failed_starts_ >= cfg_.max_failed_starts) {
    const std::string error = "not submitted: the last " + std::to_string(failed_starts_) +
                              " worker jobs ended before their agent registered (last: " + last_start_failure_ + ")";
    trace_.record(exec_.now(), TraceKind::job_rejected,
                  {{"gpus", size.gpus}, {"cpus", size.cpus}, {"mem_per_cpu_gb", size.mem_per_cpu_gb}, {"error", error}});
    done(std::nullopt, error);
    return;
  }
  if (failed_starts_ > 0) {
    const auto wait = cfg_.failure_backoff * (1 << std::min(failed_starts_ - 1, 10));
    auto timer = std::make_shared<boost::asio::steady_timer>(poll_timer_.get_executor(), wait);
    held_submissions_.push_back(timer);
    trace_.record(exec_.now(), TraceKind::job_submit_delayed,
                  {{"wall_s", std::chrono::duration<double>(wait).count()}, {"failed_starts", failed_starts_}});
    timer->async_wait([this, timer, size, done = std::move(done)](const boost::system::error_code& ec) mutable {
      if (ec) return;  // closed
      held_submissions_.erase(std::remove(held_submissions_.begin(), held_submissions_.end(), timer),
                              held_submissions_.end());
      sbatch_worker(size, std::move(done));
    });
    return;
  }
  sbatch_worker(size, std::move(done));
}

void SlurmBackend::sbatch_worker(const WorkerJobSize& size, SubmitDone done) {
  if (outage_since_) {
    // The controller is not answering: the sbatch waits for it, rather than
    // failing or being sent blind.
    trace_.record(exec_.now(), TraceKind::job_submit_delayed, {{"reason", "slurm outage"}});
    held_for_outage_.push_back(HeldSubmission{size, std::move(done)});
    return;
  }
  ++submits_in_flight_;
  ++submit_generation_;
  client_.submit(worker_script(size), slurm::job_comment(cfg_.run_id, ++submissions_),
                 [this, size, done = std::move(done)](std::optional<std::string> id, std::string error) {
                   --submits_in_flight_;
                   ++submit_generation_;
                   if (!id) {
                     trace_.record(exec_.now(), TraceKind::job_rejected,
                                   {{"gpus", size.gpus}, {"cpus", size.cpus},
                                    {"mem_per_cpu_gb", size.mem_per_cpu_gb}, {"error", error}});
                     done(std::nullopt, error);
                     return;
                   }
                   // The journal first: a head killed right after this line
                   // still leaves the id for --cleanup.
                   if (journal_) journal_->record(cfg_.run_id, *id);
                   Job& j = jobs_[*id];
                   j.size = size;
                   watch(j);
                   trace_.record(exec_.now(), TraceKind::job_submitted,
                                 {{"job", *id}, {"gpus", size.gpus}, {"cpus", size.cpus},
                                  {"mem_per_cpu_gb", size.mem_per_cpu_gb},
                                  {"time_limit", format_slurm_time(size.time_limit)}});
                   done(*id, "");
                 });
}

void SlurmBackend::cancel_jobs(const std::vector<std::string>& ids) {
  std::vector<std::string> mine;
  for (const auto& id : ids) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.ended) continue;
    it->second.cancel_requested = true;
    watch(it->second);
    trace_.record(exec_.now(), TraceKind::job_cancel_requested, {{"job", id}});
    mine.push_back(id);
  }
  if (mine.empty()) return;
  scancel(std::move(mine));
}

void SlurmBackend::scancel(std::vector<std::string> ids) {
  client_.cancel(ids, [this, ids](bool ok, std::string error) {
    if (!ok) {
      trace_.record(exec_.now(), TraceKind::slurm_error, {{"command", "scancel"}, {"error", error}});
      // Sent again once the controller answers: a job asked to go is
      // never left to its time limit.
      cancels_to_resend_.insert(ids.begin(), ids.end());
    }
    arm_poll(std::chrono::milliseconds(0));  // see the jobs leave as soon as squeue does
  });
}

std::vector<std::string> SlurmBackend::still_listed(const std::vector<std::string>& ids) const {
  // Answered from what the last squeue (and sbatch, scancel and the agents
  // since) said, by lookup: a cancel wait's poll costs its own jobs, not the
  // run's every job. jobs_ is keyed by id, so listing order is the ids' order.
  std::vector<std::string> out;
  for (const auto& id : ids)
    if (auto it = jobs_.find(id); it != jobs_.end() && !it->second.ended) out.push_back(id);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<JobInfo> SlurmBackend::list_jobs() const {
  std::vector<JobInfo> out;
  for (const auto& [id, j] : jobs_)
    if (!j.ended) out.push_back(JobInfo{id, "ray_worker", j.state});
  return out;
}

std::vector<std::string> SlurmBackend::leaving_job_ids() const {
  std::vector<std::string> out;
  for (const auto& [id, j] : jobs_)
    if (!j.ended && (j.cancel_requested || j.stop_requested || j.state == JobState::Completing)) out.push_back(id);
  return out;
}

std::vector<std::string> SlurmBackend::live_job_ids() const {
  std::vector<std::string> out;
  for (const auto& [id, j] : jobs_)
    if (!j.ended) out.push_back(id);
  return out;
}

void SlurmBackend::stop_node(const std::string& id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || !it->second.registered) return;
  it->second.stop_requested = true;
  watch(it->second);
  trace_.record(exec_.now(), TraceKind::node_stop_requested, {{"job", id}});
  if (!server_.drain(id))
    trace_.record(exec_.now(), TraceKind::agent_unreachable, {{"job", id}, {"error", "no agent connected for job " + id}});
}

void SlurmBackend::start_replica(const ReplicaStart& r, StartDone done) {
  slurm::ReplicaLaunch launch;
  launch.app = r.app;
  launch.replica = r.replica;
  launch.gpu_memory_mb = r.gpu_memory_mb;
  launch.device = r.device;
  launch.kind = r.kind;
  if (!server_.start_replica(r.job_id, launch)) {
    done(false, "no agent connected for job " + r.job_id);
    return;
  }
  starts_.push_back(PendingStart{r.job_id, r.replica, std::move(done)});
}

void SlurmBackend::stop_replica(const std::string& job_id, const std::string& replica) {
  // A start still awaited is answered now: the control plane has moved on.
  for (auto it = starts_.begin(); it != starts_.end();)
    if (it->job_id == job_id && it->replica == replica) it = starts_.erase(it);
    else ++it;
  server_.stop_replica(job_id, replica);
}

std::int64_t SlurmBackend::serve_sleep_us(double work_us) const {
  // The plain replica sleeps the drawn work as wall time.
  return std::llround(work_us * cfg_.time_scale);
}

void SlurmBackend::call_replica(const std::string& job_id, const std::string& replica, const Json& payload,
                                CallDone done) {
  const std::uint64_t id = next_call_++;
  if (!server_.call(job_id, replica, id, payload)) {
    done(Json{{"error", "no agent connected for job " + job_id}});
    return;
  }
  calls_[id] = PendingCall{job_id, std::move(done)};
}

std::optional<DeviceObservation> SlurmBackend::observed_memory(const std::string& job_id, int device) const {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return std::nullopt;
  auto d = it->second.memory.find(device);
  if (d == it->second.memory.end()) return std::nullopt;
  return d->second;
}

// ------------------------------------------------------------------ polling

void SlurmBackend::arm_poll(std::chrono::milliseconds delay) {
  if (closed_) return;
  poll_timer_.expires_after(delay);
  poll_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) poll();
  });
}

void SlurmBackend::watch(Job& j) {
  if (cfg_.squeue_watch_poll.count() <= 0) return;
  j.watch_until = std::chrono::steady_clock::now() + cfg_.squeue_watch_window;
  if (!poll_in_flight_) arm_poll(std::min(cfg_.squeue_watch_poll, cfg_.squeue_poll));
}

std::chrono::milliseconds SlurmBackend::next_poll_delay() const {
  if (cfg_.squeue_watch_poll.count() <= 0) return cfg_.squeue_poll;
  const auto now = std::chrono::steady_clock::now();
  for (const auto& [id, j] : jobs_)
    if (!j.ended && now < j.watch_until && (j.cancel_requested || j.stop_requested || !j.started_traced))
      return std::min(cfg_.squeue_watch_poll, cfg_.squeue_poll);
  return cfg_.squeue_poll;
}

void SlurmBackend::poll() {
  if (closed_ || poll_in_flight_) return;
  poll_in_flight_ = true;
  // Whether every sbatch of the run had answered before this squeue ran and
  // none answered while it ran: only then is a listed job of the run that
  // the head does not know an orphan rather than an answer still on its way.
  const bool quiet = submits_in_flight_ == 0;
  const std::uint64_t generation = submit_generation_;
  const auto sent = std::chrono::steady_clock::now();
  client_.list([this, quiet, generation, sent](std::optional<std::vector<slurm::SqueueJob>> rows, std::string error) {
    poll_in_flight_ = false;
    if (closed_) return;
    if (!rows) {
      trace_.record(exec_.now(), TraceKind::slurm_error, {{"command", "squeue"}, {"error", error}});
      outage_failure("squeue", error, sent);
      if (!closed_) arm_poll(next_poll_delay());
      return;
    }
    if (outage_since_) outage_over();
    std::set<std::string> listed;
    std::vector<std::string> orphans;
    for (const auto& row : *rows) {
      auto it = jobs_.find(row.id);
      if (it == jobs_.end() && quiet && generation == submit_generation_ &&
          slurm::comment_of_run(row.comment, cfg_.run_id) && row.comment != cfg_.run_id &&
          !is_terminal(row.job_state) && orphans_cancelled_.insert(row.id).second)
        orphans.push_back(row.id);
      if (it == jobs_.end() || it->second.ended) continue;
      listed.insert(row.id);
      Job& j = it->second;
      j.state = row.job_state;
      if (row.job_state == JobState::Running || row.job_state == JobState::Completing)
        job_seen_running(row.id, j, row.nodes);
      // Why it waits, each time that changes: "Resources" is a full
      // cluster, "QOSMaxGRESPerUser" or "InvalidAccount" a job that may
      // never start.
      const std::string reason = row.job_state == JobState::Pending && row.reason != "None" ? row.reason : "";
      if (reason != j.pending_reason) {
        j.pending_reason = reason;
        if (!reason.empty()) trace_.record(exec_.now(), TraceKind::job_pending, {{"job", row.id}, {"reason", reason}});
      }
    }
    // A job submitted before this squeue ran and no longer listed has left.
    // Jobs whose sbatch answered while squeue ran may be missing from it;
    // they are judged from the next poll on (polled_once_).
    for (auto& [id, j] : jobs_)
      if (!j.ended && !j.gone && !listed.count(id) && polled_once_.count(id)) job_left_queue(id, j);
    for (const auto& [id, j] : jobs_) polled_once_.insert(id);
    // A job of the run that no sbatch answered with (its answer was lost and
    // squeue could not tell at the time): nothing would ever use or cancel
    // it, so it is cancelled now rather than left to its time limit.
    if (!orphans.empty()) {
      for (const auto& id : orphans) trace_.record(exec_.now(), TraceKind::job_orphan_cancelled, {{"job", id}});
      client_.cancel(orphans, [this](bool ok, std::string error) {
        if (!ok) trace_.record(exec_.now(), TraceKind::slurm_error, {{"command", "scancel"}, {"error", error}});
      });
    }
    arm_poll(next_poll_delay());
  });
}

void SlurmBackend::outage_failure(const std::string& command, const std::string& error,
                                  std::chrono::steady_clock::time_point sent) {
  const auto now = std::chrono::steady_clock::now();
  if (!outage_since_) {
    // The controller answered nothing from the failed call's sending on: a
    // squeue that waits out its own retries before it fails (tens of seconds
    // on a loaded machine) dates the outage from when it was sent.
    outage_since_ = sent;
    trace_.record(exec_.now(), TraceKind::slurm_outage, {{"phase", "started"}, {"command", command}, {"error", error}});
  }
  if (now - *outage_since_ < cfg_.outage_tolerance) return;
  const double s = std::chrono::duration<double>(now - *outage_since_).count();
  if (on_fatal) on_fatal(error + " (unreachable for " + format_number(std::round(s)) + " s of wall time)");
}

void SlurmBackend::outage_over() {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - *outage_since_).count();
  outage_since_.reset();
  trace_.record(exec_.now(), TraceKind::slurm_outage,
                {{"phase", "ended"}, {"wall_s", std::round(s * 1000.0) / 1000.0},
                 {"held_submissions", held_for_outage_.size()}, {"cancels_resent", cancels_to_resend_.size()}});
  std::vector<std::string> again;
  for (const auto& id : cancels_to_resend_)
    if (auto it = jobs_.find(id); it != jobs_.end() && !it->second.ended) again.push_back(id);
  cancels_to_resend_.clear();
  if (!again.empty()) scancel(std::move(again));
  auto held = std::move(held_for_outage_);
  held_for_outage_.clear();
  for (auto& h : held) sbatch_worker(h.size, std::move(h.done));
}

void SlurmBackend::job_seen_running(const std::string& id, Job& j, const std::string& host) {
  if (j.started_traced) return;
  j.started_traced = true;
  j.host = host;
  trace_.record(exec_.now(), TraceKind::job_started, {{"job", id}, {"host", host}});
}

// Gone from squeue's active states: how it ended comes from SLURM's
// records. Until they answer the job still counts as listed, so that its
// end is traced before anything that waited for it (a cancel wait's
// graceful_stop_done), as in the simulation.
void SlurmBackend::job_left_queue(const std::string& id, Job& j) {
  j.gone = true;
  j.pending_reason.clear();
  client_.ending(id, [this, id](std::optional<slurm::JobEnding> ending, std::string error) {
    auto it = jobs_.find(id);
    if (it != jobs_.end()) job_ended(id, it->second, ending, error);
  });
}

void SlurmBackend::job_ended(const std::string& id, Job& j, const std::optional<slurm::JobEnding>& ending,
                             const std::string& lookup_error) {
  Json fields{{"job", id}};
  std::string reason;
  if (ending) {
    j.state = ending->state;
    reason = ending_reason(id, j, *ending);
    fields["slurm_state"] = ending->slurm_state;
    if (!ending->exit_code.empty()) fields["exit_code"] = ending->exit_code;
    fields["source"] = ending->source;
  } else {
    // SLURM no longer knows the job (no accounting, MinJobAge passed): what
    // the head saw is all there is.
    j.state = j.cancel_requested ? JobState::Cancelled : JobState::Completed;
    reason = j.cancel_requested ? "scancel" : !j.goodbye.empty() ? "agent " + j.goodbye : "left the queue";
    fields["source"] = "head";
    fields["lookup_error"] = lookup_error;
  }
  if (!j.ever_registered && !j.cancel_requested && j.state != JobState::Timeout) {
    const std::string why = agent_log_reason(id);
    reason = "agent never registered" + (why.empty() ? std::string() : ": " + why) + " (" + reason + ")";
    if (!ending) j.state = JobState::Failed;
  }
  j.ended = true;
  fields["state"] = name(j.state);
  fields["reason"] = reason;
  trace_.record(exec_.now(), TraceKind::job_ended, fields);
  count_start_outcome(j, reason);
  if (j.registered) {
    j.registered = false;
    fail_node_requests(id, "node of job " + id + " left");
    if (listener_) listener_->node_lost(id, reason);
  }
}

// The trace's reason for a job's end, in the simulation's words where it
// has them ("scancel", "time limit reached").
std::string SlurmBackend::ending_reason(const std::string&, const Job& j, const slurm::JobEnding& e) const {
  const std::string& s = e.slurm_state;
  std::string r;
  if (j.cancel_requested && e.state == JobState::Cancelled) r = "scancel";
  else if (e.state == JobState::Cancelled)
    r = "cancelled outside this run" + (e.reason.rfind("by ", 0) == 0 ? " (" + e.reason + ")" : std::string());
  else if (e.state == JobState::Timeout) r = s == "DEADLINE" ? "deadline reached" : "time limit reached";
  else if (s == "NODE_FAIL") r = "node failure";
  else if (s == "BOOT_FAIL") r = "node boot failure";
  else if (s == "OUT_OF_MEMORY") r = "out of memory";
  else if (s == "PREEMPTED") r = "preempted";
  else if (e.state == JobState::Failed) r = "batch script failed, exit code " + (e.exit_code.empty() ? "?" : e.exit_code);
  else if (j.goodbye == "drained") r = "batch script exited after ray stop";
  else r = "batch script exited";
  // A cancelled job keeps the reason it last waited for: not why it ended.
  // A time limit's own reason restates the state: the simulation's words
  // stand alone there.
  const bool restated = (s == "TIMEOUT" && e.reason == "TimeLimit") || (s == "DEADLINE" && e.reason == "DeadLine");
  if (!e.reason.empty() && e.reason != "None" && e.state != JobState::Cancelled && !restated)
    r += " (SLURM: " + e.reason + ")";
  return r;
}

void SlurmBackend::count_start_outcome(const Job& j, const std::string& reason) {
  if (j.ever_registered || j.cancel_requested) return;
  ++failed_starts_;
  last_start_failure_ = reason;
}

std::vector<std::pair<std::string, std::string>> SlurmBackend::pending_reasons() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [id, j] : jobs_)
    if (!j.ended && j.state == JobState::Pending && !j.pending_reason.empty()) out.emplace_back(id, j.pending_reason);
  return out;
}

std::string SlurmBackend::agent_log_reason(const std::string& job_id) const {
  std::ifstream in(cfg_.workspace_dir + "/slurm_logs/ray_worker_" + job_id + ".err");
  std::string line, last;
  for (int n = 0; n < 100000 && std::getline(in, line); ++n)
    if (line.rfind("vramsim-agent: ", 0) == 0) last = line.substr(15);
  return last;
}

void SlurmBackend::fail_node_requests(const std::string& job_id, const std::string& error) {
  std::vector<StartDone> starts;
  for (auto it = starts_.begin(); it != starts_.end();)
    if (it->job_id == job_id) { starts.push_back(std::move(it->done)); it = starts_.erase(it); }
    else ++it;
  std::vector<CallDone> calls;
  for (auto it = calls_.begin(); it != calls_.end();)
    if (it->second.job_id == job_id) { calls.push_back(std::move(it->second.done)); it = calls_.erase(it); }
    else ++it;
  for (auto& d : starts) d(false, error);
  for (auto& d : calls) d(Json{{"error", error}});
}

// ------------------------------------------------------------------ agents

bool SlurmBackend::known_job(const std::string& job_id) {
  auto it = jobs_.find(job_id);
  return it != jobs_.end() && !it->second.ended && !it->second.registered;
}

void SlurmBackend::agent_registered(const slurm::AgentRegistration& r) {
  auto it = jobs_.find(r.job_id);
  if (it == jobs_.end()) return;
  Job& j = it->second;
  // An agent proves its job runs, whatever squeue said last.
  j.state = JobState::Running;
  j.ever_registered = true;
  failed_starts_ = 0;
  job_seen_running(r.job_id, j, r.hostname.empty() ? r.ip : r.hostname);
  NodeSpec spec;
  spec.ip = r.ip;
  spec.slurm_job_id = r.job_id;
  if (r.resources.is_object())
    for (auto f = r.resources.begin(); f != r.resources.end(); ++f)
      if (f.value().is_number()) spec.resources.set(f.key(), f.value().get<double>());
  spec.resources.set(kCPU, r.cpus > 0 ? r.cpus : j.size.cpus);
  if (j.size.gpus > 0) spec.resources.set(kGPU, j.size.gpus);
  spec.resources.set(kMemory, r.memory_bytes > 0 ? static_cast<double>(r.memory_bytes)
                                                 : static_cast<double>(j.size.mem_per_cpu_gb) * j.size.cpus * kGiB);
  for (const auto& d : r.devices) {
    if (static_cast<int>(spec.devices.size()) >= j.size.gpus) break;  // the devices SLURM gave the job
    spec.devices.push_back(GpuDevice{static_cast<int>(spec.devices.size()), d.name, d.total_mb, 0, 0, std::nullopt, 0});
  }
  if (!spec.devices.empty() && cfg_.accelerator_type) spec.accelerator_type = cfg_.accelerator_type(spec.devices[0].model);
  trace_.record(exec_.now(), TraceKind::node_advertised,
                {{"job", r.job_id}, {"gpus", static_cast<int>(spec.devices.size())},
                 {"resources", spec.resources.to_json()}, {"notice", r.notice},
                 {"script_resources", r.script_resources}, {"host", r.hostname}, {"agent_pid", r.pid},
                 {"allocation", r.allocation}});
  j.registered = true;
  if (listener_) listener_->node_registered(std::move(spec));
}

void SlurmBackend::agent_heartbeat(const std::string& job_id, const std::vector<slurm::DeviceUsage>& devices) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  for (const auto& d : devices) it->second.memory[d.index] = DeviceObservation{d.used_bytes, exec_.now()};
}

void SlurmBackend::replica_started(const std::string& job_id, const slurm::ReplicaStarted& r) {
  // What the replica holds, device or host memory, which the simulation
  // takes for granted: a live trace says it (replica_memory).
  if (r.ok && !r.memory.empty())
    trace_.record(exec_.now(), TraceKind::replica_memory,
                  {{"job", job_id}, {"replica", r.replica}, {"memory", r.memory}, {"bytes", r.bytes}});
  for (auto it = starts_.begin(); it != starts_.end(); ++it)
    if (it->job_id == job_id && it->replica == r.replica) {
      auto done = std::move(it->done);
      starts_.erase(it);
      done(r.ok, r.error);
      return;
    }
}

void SlurmBackend::call_result(const std::string& job_id, std::uint64_t call_id, const Json& result) {
  auto it = calls_.find(call_id);
  if (it == calls_.end() || it->second.job_id != job_id) return;
  auto done = std::move(it->second.done);
  calls_.erase(it);
  done(result);
}

void SlurmBackend::agent_gone(const std::string& job_id, const std::string& reason) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || !it->second.registered) return;
  it->second.registered = false;
  it->second.memory.clear();
  it->second.goodbye = reason;
  fail_node_requests(job_id, "node of job " + job_id + " left: " + reason);
  trace_.record(exec_.now(), TraceKind::agent_gone, {{"job", job_id}, {"reason", reason}});
  // A drained agent is the simulated "ray stop": the node leaves, the job's
  // batch script then exits on its own unless cancelled first.
  if (listener_) listener_->node_lost(job_id, reason == "drained" ? "ray stop" : reason);
  // An agent lost without leaving (killed, hung, cut off): its job would
  // hold its allocation until the time limit, a worker nothing can scale
  // down. It is cancelled; the node is already gone for the control plane.
  auto jt = jobs_.find(job_id);
  if (reason != "drained" && reason.rfind("goodbye: ", 0) != 0 && jt != jobs_.end() && !jt->second.ended &&
      !jt->second.cancel_requested) {
    jt->second.cancel_requested = true;
    watch(jt->second);
    trace_.record(exec_.now(), TraceKind::job_cancel_requested, {{"job", job_id}, {"reason", "agent lost: " + reason}});
    scancel({job_id});
  }
}

void SlurmBackend::refused(const std::string& peer, const std::string& reason) {
  trace_.record(exec_.now(), TraceKind::agent_refused, {{"peer", peer}, {"reason", reason}});
}

}  // namespace vramsim
