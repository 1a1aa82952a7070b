#include "runner/serve_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>

#include "engine/format.hpp"

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

std::string format_latency(std::optional<double> s) {
  if (!s) return "-";
  if (std::isinf(*s)) return "never";
  const double r = *s >= 10 ? std::round(*s * 10) / 10 : std::round(*s * 1000) / 1000;
  return format_number(r) + "s";
}

void print_serve_table(const std::vector<ServeOutcome>& apps, std::ostream& out) {
  if (apps.empty()) return;
  out << "\nrequests:\n";
  // The app column fits the longest id (an imported application.deployment).
  int app_w = 16;
  for (const auto& a : apps) app_w = std::max(app_w, static_cast<int>(a.app.size()) + 2);
  out << std::left << std::setw(app_w) << "app" << std::setw(10) << "arrived" << std::setw(11) << "completed"
      << std::setw(9) << "refused" << std::setw(10) << "timed out" << std::setw(7) << "cold" << std::setw(10)
      << "wait mean" << std::setw(9) << "mean" << std::setw(9) << "p50" << std::setw(9) << "p95" << std::setw(9) << "p99"
      << "replica-s\n";
  for (const auto& a : apps) {
    out << std::left << std::setw(app_w) << a.app << std::setw(10) << a.arrived << std::setw(11) << a.completed
        << std::setw(9) << a.refused << std::setw(10) << a.timed_out << std::setw(7) << a.cold << std::setw(10)
        << format_latency(a.wait_mean_s) << std::setw(9) << format_latency(a.latency_mean_s) << std::setw(9)
        << format_latency(a.p50_s) << std::setw(9)
        << format_latency(a.p95_s) << std::setw(9) << format_latency(a.p99_s)
        << format_number(std::round(a.replica_seconds)) << "\n";
    if (a.failed + a.unfinished > 0)
      out << "    " << a.failed << " lost with their node, " << a.unfinished << " unfinished at the end\n";
    if (a.slo_attainment)
      out << "    SLO attainment " << format_number(std::round(*a.slo_attainment * 10000) / 100) << "%\n";
  }
  // Where requests shared a device or a replica, the curves that set their
  // speed (docs/serving.md), one line an app.
  for (const auto& a : apps)
    if (a.peak_device_busy > 1 || a.peak_in_service > 1)
      out << "sharing: " << a.app << ": device_sharing " << a.device_sharing << " (up to " << a.peak_device_busy
          << " busy replica(s) on one device), replica_concurrency " << a.replica_concurrency << " (up to "
          << a.peak_in_service << " request(s) on one replica)\n";
}

}  // namespace vramsim
