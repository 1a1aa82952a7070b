#include "backends/sim/sim_slurm_backend.hpp"

#include <algorithm>
#include <bit>
#include <charconv>

namespace vramsim {

SimSlurmBackend::SimSlurmBackend(Executor& exec, RandomStreams& rng, TraceRecorder& trace,
                                 SimSlurmConfig cfg,
                                 std::shared_ptr<const AdvertisementPolicy> advertisement)
    : exec_(exec), rng_(rng), trace_(trace), cfg_(std::move(cfg)), advertisement_(std::move(advertisement)) {
  int n = 0;
  for (const auto& t : cfg_.nodes)
    for (int i = 0; i < t.count; ++i) {
      hosts_.push_back(Host{&t, cfg_.ip_prefix + std::to_string(++n)});
    }
  free_hosts_.assign((hosts_.size() + 63) / 64, 0);
  for (std::size_t h = 0; h < hosts_.size(); ++h) set_free(static_cast<int>(h), true);
  if (cfg_.scheduling == PartitionScheduling::Exclusive) {
    if (!cfg_.background.empty()) throw std::invalid_argument("background jobs need a shared partition (fcfs or easy)");
    return;
  }
  std::vector<NodeShape> shapes;
  for (const Host& h : hosts_) shapes.push_back(NodeShape{h.type->cpus, h.type->memory_gb * 1024, h.type->gpus});
  NodeScheduler::Callbacks cb;
  // Worker jobs have their SLURM ids (>= 1000); background jobs -(index + 1).
  cb.on_start = [this](const NodeJob& job, std::int64_t at, const std::vector<std::size_t>& nodes) {
    if (job.id < 0) {
      const BackgroundJob& b = cfg_.background[static_cast<std::size_t>(-job.id - 1)];
      ++bg_.started;
      bg_.wait_s += to_seconds(at - b.submit);
      bg_running_[job.id] = {at, b.nodes * b.cpus_per_node, b.nodes * b.gpus_per_node};
      return;
    }
    start(job_at(std::to_string(job.id)), static_cast<int>(nodes.front()));
  };
  cb.on_end = [this](const NodeJob& job, std::int64_t at, PartitionOutcome outcome) {
    if (job.id >= 0) return;  // a worker job ends through end(), which told the scheduler
    auto it = bg_running_.find(job.id);
    if (it != bg_running_.end()) {
      add_background_use(it->second, at, bg_);
      bg_running_.erase(it);
    }
    if (outcome == PartitionOutcome::Completed) ++bg_.completed;
    if (outcome == PartitionOutcome::Timeout) ++bg_.timed_out;
  };
  partition_ = std::make_unique<NodeScheduler>(
      std::move(shapes),
      cfg_.scheduling == PartitionScheduling::Easy ? PartitionPolicy::Easy : PartitionPolicy::Fcfs, std::move(cb));
  bg_.jobs = cfg_.background.size();
  partition_settle();
}

void SimSlurmBackend::add_background_use(const BackgroundRun& run, SimTime to, BackgroundStats& s) {
  if (to <= run.start) return;
  s.busy_cpu_s += to_seconds(to - run.start) * static_cast<double>(run.cores);
  s.held_gpu_s += to_seconds(to - run.start) * static_cast<double>(run.gpus);
}

BackgroundStats SimSlurmBackend::background_stats(SimTime now) const {
  BackgroundStats s = bg_;
  for (const auto& [id, run] : bg_running_) add_background_use(run, now, s);
  return s;
}

void SimSlurmBackend::partition_sync() { partition_->advance(exec_.now()); }

void SimSlurmBackend::partition_submit(SimJob& j) {
  partition_sync();
  NodeJob job;
  job.id = std::stol(j.id);
  job.nodes = 1;
  job.per_node = NodeShape{j.size.cpus, static_cast<std::int64_t>(j.size.mem_per_cpu_gb) * j.size.cpus * 1024,
                           j.size.gpus};
  // The job runs until scancel, its node's stop or its time limit, all of
  // which this backend times; the scheduler plans with the time limit.
  job.estimate = j.size.time_limit;
  job.run_time = j.size.time_limit + kHour;
  partition_->submit(exec_.now(), job);
  partition_settle();
}

void SimSlurmBackend::partition_settle() {
  partition_->flush();
  std::optional<SimTime> next = partition_->next_completion();
  if (next_background_ < cfg_.background.size()) {
    const SimTime b = std::max(cfg_.background[next_background_].submit, exec_.now());
    next = next ? std::min(*next, b) : b;
  }
  if (wake_timer_ && (!next || *next != wake_at_)) {
    exec_.cancel(wake_timer_);
    wake_timer_ = 0;
  }
  if (next && !wake_timer_) {
    wake_at_ = std::max(*next, exec_.now());
    wake_timer_ = exec_.at(wake_at_, [this] {
      wake_timer_ = 0;
      partition_wake();
    });
  }
}

void SimSlurmBackend::partition_wake() {
  partition_sync();
  for (; next_background_ < cfg_.background.size() && cfg_.background[next_background_].submit <= exec_.now();
       ++next_background_) {
    const BackgroundJob& b = cfg_.background[next_background_];
    NodeJob job;
    job.id = -static_cast<std::int64_t>(next_background_) - 1;
    job.nodes = b.nodes;
    job.per_node = NodeShape{b.cpus_per_node, 0, b.gpus_per_node};
    job.run_time = b.run_time;
    job.estimate = b.estimate;
    job.time_limit = b.time_limit;
    partition_->submit(exec_.now(), job);
  }
  partition_settle();
}

void SimSlurmBackend::set_free(int host, bool free) {
  const auto h = static_cast<std::size_t>(host);
  const std::uint64_t bit = std::uint64_t{1} << (h % 64);
  if (free) {
    free_hosts_[h / 64] |= bit;
    first_free_word_ = std::min(first_free_word_, h / 64);
  } else {
    free_hosts_[h / 64] &= ~bit;
    while (first_free_word_ < free_hosts_.size() && free_hosts_[first_free_word_] == 0) ++first_free_word_;
  }
}

int SimSlurmBackend::first_free_host(const WorkerJobSize& size) const {
  for (std::size_t w = first_free_word_; w < free_hosts_.size(); ++w)
    for (std::uint64_t bits = free_hosts_[w]; bits != 0; bits &= bits - 1) {
      const auto h = static_cast<int>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
      if (node_type_fits(*hosts_[h].type, size)) return h;
    }
  return -1;
}

SimJob& SimSlurmBackend::create_job(const WorkerJobSize& size, Duration queue_wait, bool warm) {
  const std::string id = std::to_string(next_id_++);
  SimJob job;
  job.id = id;
  job.size = size;
  job.submitted = exec_.now();
  Json fields = {{"job", id}, {"gpus", size.gpus}, {"cpus", size.cpus},
                 {"mem_per_cpu_gb", size.mem_per_cpu_gb}, {"time_limit", format_slurm_time(size.time_limit)},
                 {"queue_wait_us", queue_wait}};
  if (warm) fields["warm"] = true;
  trace_.record(exec_.now(), TraceKind::job_submitted, std::move(fields));
  active_.push_back(jobs_.size());
  ++active_count_;
  return jobs_.emplace_back(std::move(job));
}

SimJob* SimSlurmBackend::find_job(const std::string& id) const {
  long k = 0;
  const char* last = id.data() + id.size();
  const auto [end, ec] = std::from_chars(id.data(), last, k);
  if (ec != std::errc{} || end != last || k < kFirstJobId) return nullptr;
  const auto i = static_cast<std::size_t>(k - kFirstJobId);
  if (i >= jobs_.size() || jobs_[i].id != id) return nullptr;  // "01000" is not 1000
  return const_cast<SimJob*>(&jobs_[i]);
}

void SimSlurmBackend::submit_worker(const WorkerJobSize& size, SubmitDone done) {
  std::string error;
  auto id = submit(size, &error);
  done(std::move(id), error);
}

std::optional<std::string> SimSlurmBackend::submit(const WorkerJobSize& size, std::string* error) {
  // sbatch refuses a job no node of the partition could ever run.
  const bool feasible = std::any_of(cfg_.nodes.begin(), cfg_.nodes.end(),
                                    [&](const PartitionNodeType& t) { return t.count > 0 && node_type_fits(t, size); });
  if (!feasible) {
    std::string msg = "sbatch: error: Batch job submission failed: Requested node configuration is not available";
    if (error) *error = msg;
    trace_.record(exec_.now(), TraceKind::job_rejected,
                  {{"gpus", size.gpus}, {"cpus", size.cpus}, {"mem_per_cpu_gb", size.mem_per_cpu_gb}, {"error", msg}});
    return std::nullopt;
  }
  const Duration wait = cfg_.queue_wait.sample(rng_.stream("slurm.queue_wait"));
  SimJob& job = create_job(size, wait, false);
  const std::string id = job.id;
  if (!partition_) queue_.push_back(&job);
  SimJob* jp = &job;  // jobs_ never erases, so the pointer stays valid
  job.pending_timer = exec_.after(wait, [this, jp] {
    SimJob& j = *jp;
    j.pending_timer = 0;
    j.eligible = true;
    if (partition_)
      partition_submit(j);
    else
      schedule();
  });
  return id;
}

void SimSlurmBackend::schedule() {
  // FCFS: the head of the queue blocks the rest while it cannot start.
  while (!queue_.empty()) {
    SimJob& j = *queue_.front();
    if (j.life.state() != JobState::Pending) {  // cancelled while it waited
      queue_.pop_front();
      continue;
    }
    if (!j.eligible) return;
    const int host = first_free_host(j.size);
    if (host < 0) return;
    queue_.pop_front();
    start(j, host);
  }
}

void SimSlurmBackend::start(SimJob& j, int host) {
  j.life.move(JobState::Running);
  j.started = exec_.now();
  j.host = host;
  if (!partition_) {
    set_free(host, false);
  }
  trace_.record(exec_.now(), TraceKind::job_started, {{"job", j.id}, {"host", hosts_[host].ip}});
  // The timers hold the job itself (jobs_ never erases): a closure this
  // small lives inside the event, with no allocation of its own.
  SimJob* jp = &j;
  j.limit_timer = exec_.after(j.size.time_limit, [this, jp] {
    jp->limit_timer = 0;
    end(*jp, JobState::Timeout, "time limit reached");
  });
  const Duration boot = cfg_.node_boot.sample(rng_.stream("slurm.node_boot"));
  j.pending_timer = exec_.after(boot, [this, jp] { boot_done(jp->id); });
}

NodeGpuFacts SimSlurmBackend::facts_for(const SimJob& j) const {
  const auto& t = *hosts_[j.host].type;
  NodeGpuFacts f;
  f.gpus = j.size.gpus;
  f.nvidia_smi_present = t.nvidia_smi_present;
  f.nvidia_smi_fails = t.nvidia_smi_fails;
  f.mig_enabled = t.mig_enabled;
  f.memory_total_mb.assign(static_cast<std::size_t>(j.size.gpus), t.gpu_memory_mb);
  return f;
}

void SimSlurmBackend::boot_done(const std::string& id, bool warm) {
  SimJob& j = job_at(id);
  j.pending_timer = 0;
  const auto facts = facts_for(j);
  Advertisement ad = advertisement_->advertise(id, facts);
  trace_.record(exec_.now(), TraceKind::node_advertised,
                {{"job", id}, {"gpus", facts.gpus}, {"resources", ad.resources.to_json()},
                 {"notice", ad.notice}});
  if (warm) {
    register_node(id, ad);
    return;
  }
  const Duration reg = cfg_.registration.sample(rng_.stream("slurm.registration"));
  j.pending_timer = exec_.after(reg, [this, id, ad] {
    job_at(id).pending_timer = 0;
    register_node(id, ad);
  });
}

void SimSlurmBackend::register_node(const std::string& id, const Advertisement& ad) {
  SimJob& j = job_at(id);
  j.registered = true;
  const PartitionNodeType& type = *hosts_[j.host].type;
  NodeSpec spec;
  spec.ip = hosts_[j.host].ip;
  spec.slurm_job_id = id;
  spec.resources = ad.resources;
  spec.resources.set(kCPU, j.size.cpus);
  if (j.size.gpus > 0) spec.resources.set(kGPU, j.size.gpus);
  spec.resources.set(kMemory, static_cast<double>(j.size.mem_per_cpu_gb) * j.size.cpus * kGiB);
  for (int g = 0; g < j.size.gpus; ++g)
    spec.devices.push_back(GpuDevice{g, type.gpu_model, type.gpu_memory_mb, 0, 0, std::nullopt, 0});
  spec.accelerator_type = j.size.gpus > 0 ? type.accelerator_type : "";
  if (j.size.gpus > 0)
    for (const auto& [name, amount] : type.gpu_labels) spec.resources.set(name, amount);
  if (listener_) listener_->node_registered(std::move(spec));
}

void SimSlurmBackend::end(SimJob& j, JobState final_state, const std::string& reason) {
  if (is_terminal(j.life.state())) return;
  if (j.pending_timer) exec_.cancel(j.pending_timer);
  if (j.limit_timer) exec_.cancel(j.limit_timer);
  j.pending_timer = j.limit_timer = 0;
  const bool had_node = j.registered;
  j.life.move(final_state);
  --active_count_;
  if (++ended_in_active_ > active_.size() / 2) compact_active();
  j.ended = exec_.now();
  j.registered = false;
  if (partition_) {
    // Queued or running there once eligible; its cores go back now.
    if (j.eligible) {
      partition_sync();
      partition_->cancel(exec_.now(), std::stol(j.id));
    }
  } else if (j.host >= 0) {
    set_free(j.host, true);
  }
  trace_.record(exec_.now(), TraceKind::job_ended, {{"job", j.id}, {"state", name(final_state)}, {"reason", reason}});
  if (had_node) node_gone(j.id, reason);
  if (partition_)
    partition_settle();
  else
    schedule();
}

void SimSlurmBackend::cancel_jobs(const std::vector<std::string>& ids) {
  for (const auto& id : ids) {
    SimJob* found = find_job(id);
    if (!found || is_terminal(found->life.state())) continue;
    SimJob& j = *found;
    trace_.record(exec_.now(), TraceKind::job_cancel_requested, {{"job", id}});
    if (j.life.state() == JobState::Pending) {
      end(j, JobState::Cancelled, "scancel");
      continue;
    }
    if (j.life.state() == JobState::Completing) continue;
    // The processes die at once; the job lingers in squeue while it completes.
    // A completing job can no longer reach its time limit or finish a step, so
    // both of its timers go; the cancel latency becomes its only one.
    j.life.move(JobState::Completing);
    if (j.pending_timer) exec_.cancel(j.pending_timer);
    if (j.limit_timer) exec_.cancel(j.limit_timer);
    j.pending_timer = j.limit_timer = 0;
    const bool had_node = j.registered;
    j.registered = false;
    if (had_node) node_gone(id, "scancel");
    const Duration d = cfg_.cancel_latency.sample(rng_.stream("slurm.cancel"));
    SimJob* jp = &j;
    j.pending_timer = exec_.after(d, [this, jp] {
      jp->pending_timer = 0;
      end(*jp, JobState::Cancelled, "scancel");
    });
  }
}

std::vector<std::string> SimSlurmBackend::still_listed(const std::vector<std::string>& ids) const {
  // The listing is in id order; a job is listed while it is not terminal.
  std::vector<std::string> out;
  for (const auto& id : ids) {
    const SimJob* j = find_job(id);
    if (j && !is_terminal(j->life.state())) out.push_back(id);
  }
  // Numeric order, as list_jobs (the ids found have no leading zeros).
  std::sort(out.begin(), out.end(), [](const std::string& x, const std::string& y) {
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<JobInfo> SimSlurmBackend::list_jobs() const {
  std::vector<JobInfo> out;
  out.reserve(active_count_);
  for (std::size_t i : active_) {
    const SimJob& j = jobs_[i];
    if (!is_terminal(j.life.state())) out.push_back(JobInfo{j.id, "ray_worker", j.life.state()});
  }
  return out;
}

void SimSlurmBackend::compact_active() {
  std::erase_if(active_, [this](std::size_t i) { return is_terminal(jobs_[i].life.state()); });
  ended_in_active_ = 0;
}

void SimSlurmBackend::stop_node(const std::string& id) {
  SimJob* jp = find_job(id);
  if (!jp || !jp->registered) return;
  const Duration d = cfg_.ray_stop.sample(rng_.stream("slurm.ray_stop"));
  trace_.record(exec_.now(), TraceKind::node_stop_requested, {{"job", id}});
  exec_.after(d, [this, jp] {
    SimJob& j = *jp;
    const std::string& id = j.id;
    if (!j.registered || j.life.state() != JobState::Running) return;
    // The node leaves; the batch script exits on its own only where the
    // scenario says it does (job_exit_after_stop), else scancel ends it.
    j.registered = false;
    node_gone(id, "ray stop");
    if (!cfg_.job_exit_after_stop) return;
    const Duration exit = cfg_.job_exit_after_stop->sample(rng_.stream("slurm.job_exit"));
    j.pending_timer = exec_.after(exit, [this, jp] {
      jp->pending_timer = 0;
      end(*jp, JobState::Completed, "batch script exited after ray stop");
    });
  });
}

void SimSlurmBackend::call_replica(const std::string& job_id, const std::string& replica, const Json& payload,
                                   CallDone done) {
  (void)payload;
  const Duration d = cfg_.call.sample(rng_.stream("replica.call"));
  exec_.after(d, [this, job_id, replica, done = std::move(done)] {
    const SimJob* j = find_job(job_id);
    if (!j || !j->registered) {
      done(Json{{"error", "node of job " + job_id + " is gone"}});
      return;
    }
    done(Json{{"replica", replica}, {"simulated", true}});
  });
}

std::string SimSlurmBackend::start_warm_worker(const WorkerJobSize& size) {
  if (partition_) {
    SimJob& j = create_job(size, 0, true);
    j.eligible = true;
    partition_submit(j);
    if (!j.started) throw std::invalid_argument("no free partition node fits a warm worker");
  } else {
    const int host = first_free_host(size);
    if (host < 0) throw std::invalid_argument("no free partition node fits a warm worker");
    start(create_job(size, 0, true), host);
  }
  SimJob& j = job_at(std::to_string(next_id_ - 1));
  if (j.pending_timer) exec_.cancel(j.pending_timer);
  j.pending_timer = 0;
  boot_done(j.id, true);
  return j.id;
}

std::uint32_t SimSlurmBackend::serving_replica(const std::string& job_id, const std::string& replica, int device,
                                               const SpeedCurve& device_sharing,
                                               const SpeedCurve& replica_concurrency) {
  (void)replica;
  JobServing& js = serving_jobs_[job_id];
  SharedDevices::DeviceId dev;
  if (device >= 0) {
    const auto i = static_cast<std::size_t>(device);
    if (js.devices.size() <= i) js.devices.resize(i + 1);
    if (!js.devices[i]) js.devices[i] = shared_.add_device();
    dev = *js.devices[i];
  } else {
    dev = shared_.add_device();
  }
  const auto id = shared_.add_replica(dev, device_sharing, replica_concurrency);
  js.replicas.push_back(id);
  return id;
}

void SimSlurmBackend::node_gone(const std::string& job_id, const std::string& reason) {
  // The replicas' processes die with the node: their requests never answer.
  if (auto it = serving_jobs_.find(job_id); it != serving_jobs_.end()) {
    for (auto r : it->second.replicas) shared_.drop(r);
    serving_jobs_.erase(it);
  }
  if (listener_) listener_->node_lost(job_id, reason);
}

std::optional<ReplicaFailure> SimSlurmBackend::construct_replica(const ReplicaStart& r) {
  if (r.device < 0 || r.observed_mb <= 0) return std::nullopt;
  SimJob* job = find_job(r.job_id);
  const PartitionNodeType* type = job ? host_type(*job) : nullptr;
  if (!type) return std::nullopt;
  JobServing& js = serving_jobs_[r.job_id];
  std::int64_t& held = js.held_mb[r.device];
  if (held + r.observed_mb > type->cuda_total_mb)
    return ReplicaFailure{"CUDA out of memory", r.device, type->cuda_total_mb, held, r.observed_mb,
                          js.held_count[r.device]};
  held += r.observed_mb;
  ++js.held_count[r.device];
  js.constructed[r.replica] = {r.device, r.observed_mb};
  return std::nullopt;
}

void SimSlurmBackend::stop_replica(const std::string& job_id, const std::string& replica) {
  auto it = serving_jobs_.find(job_id);
  if (it == serving_jobs_.end()) return;
  JobServing& js = it->second;
  auto c = js.constructed.find(replica);
  if (c == js.constructed.end()) return;
  js.held_mb[c->second.first] -= c->second.second;
  --js.held_count[c->second.first];
  js.constructed.erase(c);
}

}  // namespace vramsim
