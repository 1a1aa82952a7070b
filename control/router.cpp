#include "control/router.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "models/gpu_models.hpp"

namespace vramsim {

double widen_latency(float f) {
  // The shortest decimal that reads back as this float, read as a double:
  // 0.001f gives 0.001, not 0.0010000000474974513.
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);
  double d = f;
  if (ec == std::errc()) std::from_chars(buf, end, d);
  return d;
}

std::optional<double> percentile_with_never(std::vector<float>& v, std::uint64_t never, double p) {
  const std::uint64_t n = v.size() + never;
  if (n == 0) return std::nullopt;
  auto rank = static_cast<std::uint64_t>(std::ceil(p / 100 * static_cast<double>(n) - 1e-9));
  rank = std::clamp<std::uint64_t>(rank, 1, n);
  if (rank > v.size()) return INFINITY;
  auto nth = v.begin() + static_cast<std::ptrdiff_t>(rank - 1);
  std::nth_element(v.begin(), nth, v.end());
  return widen_latency(*nth);
}

const char* to_string(RequestOutcome o) {
  switch (o) {
    case RequestOutcome::Completed: return "completed";
    case RequestOutcome::Refused: return "refused";
    case RequestOutcome::TimedOut: return "timed_out";
    case RequestOutcome::Failed: return "failed";
    case RequestOutcome::Unfinished: return "unfinished";
  }
  return "unfinished";
}

void Router::keep_requests(std::size_t expected) {
  keep_requests_ = true;
  expected = std::min(expected, kMaxRequestRecords);
  records_.app.reserve(expected);
  records_.arrival.reserve(expected);
  records_.start.reserve(expected);
  records_.end.reserve(expected);
  records_.replica.reserve(expected);
  records_.cold.reserve(expected);
  records_.outcome.reserve(expected);
  record_epoch_.reserve(expected);
}

std::uint32_t Router::record_arrival(AppServing& s, const Waiting& w) {
  if (!keep_requests_) return kNoRecord;
  if (records_.size() >= kMaxRequestRecords)
    throw std::length_error("more than " + std::to_string(kMaxRequestRecords) + " requests to record in one run");
  if (s.record_app == kNoRecord) {
    s.record_app = static_cast<std::uint32_t>(records_.app_names.size());
    records_.app_names.push_back(s.app->spec.id);
  }
  records_.app.push_back(s.record_app);
  records_.arrival.push_back(w.arrival);
  records_.start.push_back(-1);
  records_.end.push_back(-1);
  records_.replica.push_back(-1);
  records_.cold.push_back(w.cold ? 1 : 0);
  records_.outcome.push_back(RequestOutcome::Unfinished);
  record_epoch_.push_back(0);
  return static_cast<std::uint32_t>(records_.size() - 1);
}

void Router::record_end(std::uint32_t record, RequestOutcome outcome, SimTime end) {
  if (record == kNoRecord) return;
  records_.outcome[record] = outcome;
  records_.end[record] = end;
}

// At the run's end: a request a replica took whose replica's node was lost
// since (its epoch moved on) failed then; the rest are unfinished.
void Router::settle_records() {
  for (std::size_t i = 0; i < records_.size(); ++i) {
    if (records_.outcome[i] != RequestOutcome::Unfinished || records_.replica[i] < 0) continue;
    const AppServing& s = serving_.at(records_.app_names[records_.app[i]]);
    const Slot& slot = s.slots[static_cast<std::size_t>(records_.replica[i])];
    const std::uint32_t epoch = record_epoch_[i];
    if (epoch == slot.epoch) continue;
    records_.outcome[i] = RequestOutcome::Failed;
    records_.end[i] = epoch < slot.lost_at.size() ? slot.lost_at[epoch] : -1;
  }
}

void Router::call(const std::string& app_id, const Json& payload) {
  const std::uint64_t call_id = ++calls_;
  auto it = apps_.find(app_id);
  const ReplicaRecord* target = nullptr;
  std::size_t index = 0;
  if (it != apps_.end() && !ctx_.exited)
    for (std::size_t i = 0; i < it->second.replicas.size() && !target; ++i)
      if (it->second.replicas[i].life.state() == ReplicaState::Running) { target = &it->second.replicas[i]; index = i; }
  const Node* n = target ? ctx_.cluster.node(target->node) : nullptr;
  if (!n || !n->alive()) {
    ctx_.trace.record(ctx_.exec.now(), TraceKind::call_failed,
                      {{"app", app_id}, {"call", call_id}, {"error", "no running replica of " + app_id}});
    return;
  }
  const std::string replica = app_id + "#" + std::to_string(index);
  const SimTime sent = ctx_.exec.now();
  ctx_.trace.record(sent, TraceKind::call_sent, {{"app", app_id}, {"call", call_id}, {"replica", replica}, {"node", n->id}});
  auto answered = [this, app_id, call_id, replica, sent](Json result) {
    const bool ok = !(result.is_object() && result.contains("error"));
    ctx_.trace.record(ctx_.exec.now(), TraceKind::call_result,
                      {{"app", app_id}, {"call", call_id}, {"replica", replica}, {"ok", ok},
                       {"latency_us", ctx_.exec.now() - sent}, {"result", std::move(result)}});
  };
  ctx_.backend.call_replica(n->spec.slurm_job_id, replica, payload, std::move(answered));
}

Router::AppServing& Router::serving(const AppRecord& app) {
  auto [it, fresh] = serving_.try_emplace(app.spec.id);
  AppServing& s = it->second;
  if (fresh) {
    s.route = &ctx_.rng.stream("serve." + app.spec.id + ".route");
    s.work = &ctx_.rng.stream("serve." + app.spec.id + ".service");
    s.last_change = ctx_.exec.now();
  }
  s.app = &app;
  s.spec = app.spec.serve ? &*app.spec.serve : nullptr;
  return s;
}

void Router::count_replica_time(AppServing& s) {
  const SimTime now = ctx_.exec.now();
  s.stats.replica_seconds += to_seconds(now - s.last_change) * static_cast<double>(s.candidates.size());
  s.last_change = now;
}

void Router::serve(const std::string& app_id, Duration service) { serve_from(app_id, service, kNoParent); }

void Router::serve_from(const std::string& app_id, Duration service, std::uint32_t parent) {
  auto it = apps_.find(app_id);
  if (it == apps_.end() || !it->second.spec.serve) {
    if (parent != kNoParent) child_ended(parent, RequestOutcome::Refused);
    return;
  }
  if (before_change) before_change();
  AppServing& s = serving(it->second);
  ++s.stats.arrived;
  ++s.w_arrivals;
  const AppState st = it->second.life.state();
  const SimTime now = ctx_.exec.now();
  // A deployment that failed, or was deleted, answers with an error at once.
  if (ctx_.exited || st == AppState::DeployFailed || st == AppState::Deleted || st == AppState::Deleting) {
    ++s.stats.refused;
    ++s.w_never;
    record_end(record_arrival(s, Waiting{now, service, false}), RequestOutcome::Refused, now);
    if (parent != kNoParent) child_ended(parent, RequestOutcome::Refused);
    return;
  }
  expire(s);
  Waiting w{now, service, s.candidates.empty()};
  w.parent = parent;
  w.record = record_arrival(s, w);
  if (w.cold) {
    ++s.stats.cold;
    w.first_cold = !s.cold_start_open;
    s.cold_start_open = true;
  }
  if (s.queue.empty() && s.free_slots > 0) {
    const long r = choose(s);
    if (r >= 0) { start(s, static_cast<std::size_t>(r), w); return; }
  }
  const int limit = s.spec->max_queued_requests;
  if (limit >= 0 && static_cast<long>(s.queue.size()) >= limit) {
    ++s.stats.refused;
    ++s.w_never;
    record_end(w.record, RequestOutcome::Refused, now);
    if (parent != kNoParent) child_ended(parent, RequestOutcome::Refused);
    return;
  }
  s.queue.push_back(w);
}

void Router::expire(AppServing& s) {
  if (!s.spec || !s.spec->request_timeout) return;
  // One timeout for every request of the app: deadlines are in arrival
  // order, so the expired ones are at the head.
  const SimTime now = ctx_.exec.now();
  while (!s.queue.empty() && s.queue.front().arrival + *s.spec->request_timeout <= now) {
    // Expiry is looked at lazily: the request ended at its deadline.
    record_end(s.queue.front().record, RequestOutcome::TimedOut, s.queue.front().arrival + *s.spec->request_timeout);
    const std::uint32_t parent = s.queue.front().parent;
    s.queue.pop_front();
    ++s.stats.timed_out;
    ++s.w_never;
    if (parent != kNoParent) child_ended(parent, RequestOutcome::TimedOut);
  }
}

long Router::choose(AppServing& s) {
  const std::size_t n = s.candidates.size();
  if (n == 0 || s.free_slots == 0) return -1;
  const int cap = s.spec->max_ongoing_requests;
  auto room = [&](std::size_t r) { return s.slots[r].ongoing < cap; };
  if (n == 1) return room(s.candidates[0]) ? static_cast<long>(s.candidates[0]) : -1;
  // Two distinct replicas; the accepting one with the shorter queue. Neither
  // accepting: draw again (Ray retries with backoff; untimed here).
  for (int attempt = 0; attempt < 64; ++attempt) {
    const std::size_t i = s.route->index(n);
    std::size_t j = s.route->index(n - 1);
    if (j >= i) ++j;
    const std::size_t a = s.candidates[i], b = s.candidates[j];
    const bool ra = room(a), rb = room(b);
    if (ra && rb) return static_cast<long>(s.slots[b].ongoing < s.slots[a].ongoing ? b : a);
    if (ra) return static_cast<long>(a);
    if (rb) return static_cast<long>(b);
  }
  // Few free slots among many replicas: the least loaded accepting one.
  long best = -1;
  for (std::size_t r : s.candidates)
    if (room(r) && (best < 0 || s.slots[r].ongoing < s.slots[static_cast<std::size_t>(best)].ongoing))
      best = static_cast<long>(r);
  return best;
}

void Router::start(AppServing& s, std::size_t replica, const Waiting& w) {
  Slot& slot = s.slots[replica];
  ++slot.ongoing;
  ++s.on_replicas;
  --s.free_slots;
  const SimTime now = ctx_.exec.now();
  ++s.stats.dispatched;
  s.stats.wait_sum_s += to_seconds(now - w.arrival);
  if (now > w.arrival) ++s.stats.waited;
  // Solo work at the engine's resolution, scaled to this replica's GPU kind.
  double work = w.service >= 0 ? static_cast<double>(w.service) : static_cast<double>(slot.model->sample(*s.work, 1));
  work *= slot.scale;
  if (w.cold && !s.stats.first_cold_dispatch) s.stats.first_cold_dispatch = now;
  if (w.record != kNoRecord) {
    records_.start[w.record] = now;
    records_.replica[w.record] = static_cast<std::int32_t>(replica);
    record_epoch_[w.record] = slot.epoch;
  }
  if (s.spec->request_timeout) {
    start_timed(s, replica, w, work, w.arrival + *s.spec->request_timeout);
    return;
  }
  const std::uint32_t epoch = slot.epoch;
  AppServing* sp = &s;
  ctx_.backend.serve_request(slot.serving, work, [this, sp, replica, epoch, w, now] {
    done(*sp, replica, epoch, w, now, false);
  });
}

// A request with a deadline: whichever comes first, its answer or the
// deadline, ends it; at the deadline its work is cancelled on the replica.
void Router::start_timed(AppServing& s, std::size_t replica, const Waiting& w, double work, SimTime deadline) {
  const SimTime now = ctx_.exec.now();
  const std::uint32_t epoch = s.slots[replica].epoch;
  AppServing* sp = &s;
  struct Race {
    ClusterBackend::ServeId request = 0;
    TimerId deadline = 0;
    bool over = false;
  };
  auto race = std::make_shared<Race>();
  race->request = ctx_.backend.serve_request(s.slots[replica].serving, work, [this, sp, replica, epoch, w, now, race] {
    if (race->over) return;
    race->over = true;
    if (race->deadline) ctx_.exec.cancel(race->deadline);
    done(*sp, replica, epoch, w, now, false);
  });
  if (race->over) return;
  race->deadline = ctx_.exec.at(std::max(deadline, now), [this, sp, replica, epoch, w, now, race] {
    if (race->over) return;
    race->over = true;
    ctx_.backend.cancel_request(race->request);
    done(*sp, replica, epoch, w, now, true);
  });
}

void Router::done(AppServing& s, std::size_t replica, std::uint32_t epoch, const Waiting& w, SimTime dispatched,
                  bool timed_out) {
  Slot& slot = s.slots[replica];
  if (slot.epoch != epoch) return;  // the replica went; counted as failed then
  if (!timed_out && w.hop < s.app->spec.calls.size()) {
    call_next(s, replica, epoch, w, dispatched);
    return;
  }
  finish(s, replica, w, dispatched, timed_out ? RequestOutcome::TimedOut : RequestOutcome::Completed);
}

void Router::call_next(AppServing& s, std::size_t replica, std::uint32_t epoch, const Waiting& w, SimTime dispatched) {
  std::uint32_t id = 0;
  if (!calling_free_.empty()) {
    id = calling_free_.back();
    calling_free_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(calling_.size());
    calling_.emplace_back();
  }
  calling_[id] = Calling{&s, replica, epoch, w, dispatched};
  serve_from(s.app->spec.calls[w.hop], -1, id);
}

void Router::child_ended(std::uint32_t parent, RequestOutcome outcome) {
  const Calling c = calling_[parent];
  calling_free_.push_back(parent);
  if (c.s->slots[c.replica].epoch != c.epoch) return;  // the caller's replica was lost meanwhile
  Waiting w = c.w;
  ++w.hop;
  if (outcome == RequestOutcome::Completed && w.hop < c.s->app->spec.calls.size()) {
    call_next(*c.s, c.replica, c.epoch, w, c.dispatched);
    return;
  }
  finish(*c.s, c.replica, w, c.dispatched, outcome);
}

void Router::finish(AppServing& s, std::size_t replica, const Waiting& w, SimTime dispatched, RequestOutcome outcome) {
  const SimTime arrival = w.arrival;
  const bool cold = w.cold;
  Slot& slot = s.slots[replica];
  if (before_change) before_change();
  --slot.ongoing;
  --s.on_replicas;
  if (slot.accepting) ++s.free_slots;
  const SimTime now = ctx_.exec.now();
  record_end(w.record, outcome, now);
  if (outcome == RequestOutcome::TimedOut || outcome == RequestOutcome::Refused || outcome == RequestOutcome::Failed) {
    // A call refused or timed out downstream ends its caller's request so.
    if (outcome == RequestOutcome::TimedOut) ++s.stats.timed_out;
    else if (outcome == RequestOutcome::Refused) ++s.stats.refused;
    else ++s.stats.failed;
    ++s.w_never;
  } else {
    ++s.stats.completed;
    s.stats.latency_sum_s += to_seconds(now - arrival);
    const auto latency = static_cast<float>(to_seconds(now - arrival));
    s.stats.latencies_s.push_back(latency);
    if (windows_) {
      ++s.w_completed;
      s.w_latencies.push_back(latency);
    }
    if (s.spec->slo_latency && now - arrival <= *s.spec->slo_latency) ++s.stats.slo_met;
    if (cold && !s.stats.first_cold_done) {
      s.stats.first_cold_done = now;
      s.stats.first_cold_arrival = arrival;
    }
    // The request that found the app at zero replicas: its path, for explain.
    if (w.first_cold)
      ctx_.trace.record(now, TraceKind::request_cold_start,
                        {{"app", s.app->spec.id}, {"replica", slot.label}, {"arrived_us", arrival},
                         {"dispatched_us", dispatched}, {"latency_us", now - arrival}});
  }
  dispatch(s);
  if (w.parent != kNoParent) child_ended(w.parent, outcome);
}

void Router::dispatch(AppServing& s) {
  expire(s);
  while (!s.queue.empty() && s.free_slots > 0) {
    const long r = choose(s);
    if (r < 0) break;
    const Waiting w = s.queue.front();
    s.queue.pop_front();
    start(s, static_cast<std::size_t>(r), w);
  }
}

void Router::set_accepting(AppServing& s, std::size_t replica, bool on) {
  Slot& slot = s.slots[replica];
  if (slot.accepting == on) return;
  count_replica_time(s);
  const int cap = s.spec->max_ongoing_requests;
  if (on) {
    slot.candidate = s.candidates.size();
    s.candidates.push_back(replica);
    s.free_slots += std::max(0, cap - slot.ongoing);
  } else {
    // Swap-remove keeps the candidate list dense.
    const std::size_t pos = slot.candidate;
    s.candidates[pos] = s.candidates.back();
    s.slots[s.candidates[pos]].candidate = pos;
    s.candidates.pop_back();
    s.free_slots -= std::max(0, cap - slot.ongoing);
  }
  slot.accepting = on;
}

void Router::replica_running(const AppRecord& app, std::size_t index) {
  if (!app.spec.serve) return;
  if (before_change) before_change();
  AppServing& s = serving(app);
  if (s.slots.size() <= index) s.slots.resize(index + 1);
  Slot& slot = s.slots[index];
  const ReplicaRecord& r = app.replicas[index];
  const Node* n = ctx_.cluster.node(r.node);
  slot.job = n ? n->spec.slurm_job_id : "";
  slot.label = app.spec.id + "#" + std::to_string(index);
  const ServiceTimeModel& m = app.spec.serve->service;
  slot.model = &m.base;
  slot.scale = 1;
  const std::string device = n && r.device >= 0 && static_cast<std::size_t>(r.device) < n->devices().size()
                                 ? n->devices()[static_cast<std::size_t>(r.device)].model
                                 : "";
  if (auto it = m.by_device.find(device); it != m.by_device.end()) {
    slot.model = &it->second;
  } else if (!m.reference_device.empty() && !device.empty() && device != m.reference_device) {
    // Scaled by dense fp16 throughput: an assumption (docs/serving.md).
    if (const GpuPeak* p = find_gpu_peak(device)) {
      const auto t = p->tflops(Accumulate::Fp32) ? p->tflops(Accumulate::Fp32) : p->tflops(Accumulate::Fp16);
      if (t && *t > 0) slot.scale = m.reference_tflops / *t;
    }
  }
  // A trace time taken as measured runs alone on a device of its own: it
  // neither slows nor is slowed by the other work there.
  const ServeSpec& sv = *app.spec.serve;
  static const SpeedCurve kIndependent{"independent", {}};
  slot.serving = sv.trace_time_as_measured
                     ? ctx_.backend.serving_replica(slot.job, slot.label, -1, kIndependent, kIndependent)
                     : ctx_.backend.serving_replica(slot.job, slot.label, r.device, sv.device_sharing,
                                                    sv.replica_concurrency);
  set_accepting(s, index, true);
  s.cold_start_open = false;
  dispatch(s);
}

void Router::replica_gone(const AppRecord& app, std::size_t index, bool lost) {
  auto it = serving_.find(app.spec.id);
  if (it == serving_.end() || index >= it->second.slots.size()) return;
  AppServing& s = it->second;
  if (before_change) before_change();
  set_accepting(s, index, false);
  Slot& slot = s.slots[index];
  // A stopped replica finishes what it holds (Ray drains it); a lost one
  // takes its requests with it.
  if (lost) {
    ServeLosses& l = losses_by_job_[slot.job];
    ++l.replicas;
    l.requests += static_cast<std::uint64_t>(slot.ongoing);
  }
  if (lost && slot.ongoing > 0) {
    if (keep_requests_) {
      slot.lost_at.resize(slot.epoch + 1, -1);
      slot.lost_at[slot.epoch] = ctx_.exec.now();
    }
    s.stats.failed += static_cast<std::uint64_t>(slot.ongoing);
    s.on_replicas -= slot.ongoing;
    slot.ongoing = 0;
    ++slot.epoch;
  }
}

double Router::ongoing_requests(const std::string& app_id) {
  auto it = serving_.find(app_id);
  if (it == serving_.end()) return 0;
  expire(it->second);
  return static_cast<double>(it->second.queue.size() + static_cast<std::size_t>(it->second.on_replicas));
}

std::optional<SimTime> Router::next_queue_expiry(const std::string& app_id) const {
  auto it = serving_.find(app_id);
  if (it == serving_.end() || it->second.queue.empty() || !it->second.spec || !it->second.spec->request_timeout)
    return std::nullopt;
  return it->second.queue.front().arrival + *it->second.spec->request_timeout;
}

int Router::running_replicas(const std::string& app_id) const {
  auto it = serving_.find(app_id);
  return it == serving_.end() ? 0 : static_cast<int>(it->second.candidates.size());
}

std::vector<ServeWindow> Router::take_window() {
  std::vector<ServeWindow> out;
  for (auto& [id, s] : serving_) {
    expire(s);
    ServeWindow w;
    w.app = id;
    w.arrivals = s.w_arrivals;
    w.completed = s.w_completed;
    w.never = s.w_never;
    if (!s.w_latencies.empty()) {
      w.p50_s = percentile_with_never(s.w_latencies, 0, 50);
      w.p95_s = percentile_with_never(s.w_latencies, 0, 95);
      w.p99_s = percentile_with_never(s.w_latencies, 0, 99);
    }
    if (s.spec && s.spec->slo_latency) w.slo_latency_s = to_seconds(*s.spec->slo_latency);
    w.replicas = static_cast<int>(s.candidates.size());
    w.ongoing = static_cast<double>(s.queue.size() + static_cast<std::size_t>(s.on_replicas));
    s.w_arrivals = s.w_completed = s.w_never = 0;
    s.w_latencies.clear();
    out.push_back(std::move(w));
  }
  return out;
}

std::map<std::string, ServeStats> Router::finish() {
  std::map<std::string, ServeStats> out;
  for (auto& [id, s] : serving_) {
    expire(s);
    count_replica_time(s);
    ServeStats st = s.stats;
    for (const Slot& slot : s.slots)
      if (slot.label.size())
        if (auto p = ctx_.backend.serving_peaks(slot.serving)) {
          st.peak_device_busy = std::max(st.peak_device_busy, p->device_busy);
          st.peak_in_service = std::max(st.peak_in_service, p->in_service);
        }
    st.unfinished = s.queue.size() + static_cast<std::size_t>(s.on_replicas);
    st.slo = s.spec && s.spec->slo_latency.has_value();
    out.emplace(id, std::move(st));
  }
  for (const auto& [id, app] : apps_)
    if (app.spec.serve && !out.count(id)) out.emplace(id, ServeStats{});
  if (keep_requests_) settle_records();
  return out;
}

}  // namespace vramsim
