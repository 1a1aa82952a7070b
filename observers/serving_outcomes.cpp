#include "observers/serving_outcomes.hpp"

#include <cmath>
#include <vector>

namespace vramsim {

ServeOutcome serve_outcome(const std::string& app, ServeStats& s) {
  ServeOutcome o;
  o.app = app;
  o.arrived = s.arrived;
  o.completed = s.completed;
  o.refused = s.refused;
  o.timed_out = s.timed_out;
  o.failed = s.failed;
  o.unfinished = s.unfinished;
  o.cold = s.cold;
  o.dispatched = s.dispatched;
  o.waited = s.waited;
  if (s.dispatched > 0) o.wait_mean_s = s.wait_sum_s / static_cast<double>(s.dispatched);
  if (s.completed > 0) o.latency_mean_s = s.latency_sum_s / static_cast<double>(s.completed);
  o.p50_s = percentile_with_never(s.latencies_s, s.never(), 50);
  o.p95_s = percentile_with_never(s.latencies_s, s.never(), 95);
  o.p99_s = percentile_with_never(s.latencies_s, s.never(), 99);
  o.replica_seconds = s.replica_seconds;
  o.peak_device_busy = s.peak_device_busy;
  o.peak_in_service = s.peak_in_service;
  if (s.slo && s.arrived > 0) o.slo_attainment = static_cast<double>(s.slo_met) / static_cast<double>(s.arrived);
  o.cold_arrival = s.first_cold_arrival;
  o.cold_dispatch = s.first_cold_dispatch;
  o.cold_done = s.first_cold_done;
  return o;
}

ServeTotals serve_totals(std::map<std::string, ServeStats>& stats) {
  ServeTotals t;
  std::vector<float> all;
  std::uint64_t never = 0, dispatched = 0, slo_met = 0, arrived = 0;
  bool slo = false;
  double wait = 0, latency = 0;
  for (auto& [id, s] : stats) {
    latency += s.latency_sum_s;
    t.completed += s.completed;
    t.refused += s.refused;
    t.timed_out += s.timed_out;
    t.failed += s.failed;
    t.unfinished += s.unfinished;
    t.cold += s.cold;
    t.replica_seconds += s.replica_seconds;
    never += s.never();
    dispatched += s.dispatched;
    wait += s.wait_sum_s;
    if (s.slo) {
      slo = true;
      slo_met += s.slo_met;
      arrived += s.arrived;
    }
  }
  // One app: its own latencies (reordered, not copied); else all pooled.
  std::vector<float>* pool = &all;
  if (stats.size() == 1) pool = &stats.begin()->second.latencies_s;
  else
    for (auto& [id, s] : stats) all.insert(all.end(), s.latencies_s.begin(), s.latencies_s.end());
  if (dispatched > 0) t.wait_mean_s = wait / static_cast<double>(dispatched);
  if (t.completed > 0) t.latency_mean_s = latency / static_cast<double>(t.completed);
  t.p50_s = percentile_with_never(*pool, never, 50);
  t.p95_s = percentile_with_never(*pool, never, 95);
  t.p99_s = percentile_with_never(*pool, never, 99);
  if (slo && arrived > 0) t.slo_attainment = static_cast<double>(slo_met) / static_cast<double>(arrived);
  return t;
}

void ServingOutcomes::end_records(SimTime end) {
  const RunContext& w = ctx();
  stats_ = w.control.settle_serve_stats();
  for (auto& [id, s] : stats_) {
    w.result.serving.push_back(serve_outcome(id, s));
    ServeOutcome& o = w.result.serving.back();
    for (const auto& a : w.scenario.apps)
      if (a.id == id && a.serve) {
        o.device_sharing = a.serve->device_sharing.name;
        o.replica_concurrency = a.serve->replica_concurrency.name;
      }
    auto us = [](std::optional<double> v) { return v && std::isfinite(*v) ? Json(std::llround(*v * 1e6)) : Json(); };
    w.trace.record(end, TraceKind::serve_summary,
                   {{"app", id}, {"arrived", o.arrived}, {"completed", o.completed}, {"refused", o.refused},
                    {"timed_out", o.timed_out}, {"failed", o.failed}, {"unfinished", o.unfinished}, {"cold", o.cold},
                    {"wait_mean_us", us(o.wait_mean_s)}, {"p50_us", us(o.p50_s)}, {"p95_us", us(o.p95_s)},
                    {"p99_us", us(o.p99_s)}});
  }
}

void ServingOutcomes::measure(RunResult& result) {
  if (stats_.empty()) return;
  const Scenario& sc = ctx().scenario;
  std::map<std::string, const AppSpec*> spec_of;
  for (const auto& s : sc.apps) spec_of[s.id] = &s;
  // A request through an application of several deployments counts once,
  // at its ingress, end to end: the calls it made downstream are not more
  // requests (their figures are their deployments' own rows).
  // With metrics_app, that app's requests only (an application's at its
  // ingress), and the replica-seconds of it (of all its deployments).
  std::map<std::string, ServeStats> requests, held;
  const auto application = sc.applications.find(sc.metrics_app);
  for (const auto& [id, st] : stats_) {
    const auto spec = spec_of.find(id);
    const bool downstream = spec != spec_of.end() && !spec->second->application_members.empty() &&
                            spec->second->application_members.front() != id;
    if (sc.metrics_app.empty()) {
      if (!downstream) requests.emplace(id, st);
      held.emplace(id, st);
    } else if (application != sc.applications.end()) {
      if (spec != spec_of.end() && spec->second->application == sc.metrics_app) {
        if (!downstream) requests.emplace(id, st);
        held.emplace(id, st);
      }
    } else if (id == sc.metrics_app) {
      requests.emplace(id, st);
      held.emplace(id, st);
    }
  }
  if (requests.empty()) return;
  RunMetrics& m = result.metrics;
  const ServeTotals t = serve_totals(requests);
  m.req_completed = static_cast<double>(t.completed);
  m.req_refused = static_cast<double>(t.refused);
  m.req_timed_out = static_cast<double>(t.timed_out);
  m.req_cold = static_cast<double>(t.cold);
  m.req_failed = static_cast<double>(t.failed);
  m.req_unfinished = static_cast<double>(t.unfinished);
  m.req_wait_mean_s = t.wait_mean_s;
  m.req_latency_mean_s = t.latency_mean_s;
  m.req_latency_p50_s = t.p50_s;
  m.req_latency_p95_s = t.p95_s;
  m.req_latency_p99_s = t.p99_s;
  m.req_slo_attainment = t.slo_attainment;
  m.replica_seconds = requests.size() == held.size() ? t.replica_seconds : serve_totals(held).replica_seconds;
}

}  // namespace vramsim
