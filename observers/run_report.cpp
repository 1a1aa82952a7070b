#include "observers/run_report.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>

#include "engine/format.hpp"

namespace vramsim {

bool RunResult::all_held() const {
  return std::all_of(expectations.begin(), expectations.end(), [](const auto& e) { return e.held; });
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

namespace {
// Unallocatable GPUs: three significant digits (one decimal from 100 on),
// so a fraction of a GPU never prints as 0 beside its non-zero share.
std::string gpus_figure(double v) {
  if (v == 0 || !std::isfinite(v)) return format_number(v);
  if (std::fabs(v) >= 100) return format_number(std::round(v * 10) / 10);
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(std::fabs(v))));
  return format_number(std::round(v * scale) / scale);
}
}  // namespace

std::string time_limit_note(const RunMetrics& m) {
  auto count = [](std::optional<double> v) { return format_number(v.value_or(0)); };
  return "time limit: " + count(m.jobs_timeout_serving) +
         " worker job(s) reached their time_limit while serving; " + count(m.replicas_lost_time_limit) +
         " replica(s) lost with their nodes (a replacement is a cold start) and " + count(m.req_failed_time_limit) +
         " request(s) lost with them (a longer cluster.worker_defaults.time_limit trades these for longer jobs: "
         "docs/serving.md, \"Worker time limits\")";
}

void print_summary(const RunResult& r, std::ostream& out) {
  out << "scenario " << r.scenario << "  policies " << r.policies << "  seed " << r.seed << "\n\n";
  // The app column fits the longest id (an imported application.deployment).
  int app_w = 18;
  for (const auto& a : r.apps) app_w = std::max(app_w, static_cast<int>(a.id.size()) + 2);
  out << std::left << std::setw(app_w) << "app" << std::setw(10) << "admitted" << std::setw(15) << "state"
      << std::setw(12) << "to RUNNING" << "reservation\n";
  for (const auto& a : r.apps) {
    out << std::left << std::setw(app_w) << a.id << std::setw(10) << a.admitted << std::setw(15) << a.final_state
        << std::setw(12) << (a.time_to_running ? format_seconds(*a.time_to_running) + "s" : "-") << a.reservation
        << "\n";
    if (!a.message.empty()) out << "    " << a.message << "\n";
  }
  const auto& m = r.metrics;
  out << "\njobs submitted " << m.jobs_submitted << ", cancelled " << m.jobs_cancelled << ", timed out "
      << m.jobs_timeout << "; scale-ups " << m.scale_ups << ", scale-downs " << m.scale_downs << "\n";
  if (m.jobs_timeout_serving && *m.jobs_timeout_serving > 0) out << time_limit_note(m) << "\n";
  if (m.shut_down)
    out << "after shutdown: " << m.jobs_left << " job(s) left behind, orphaned allocation "
        << format_number(std::round(m.orphaned_job_seconds)) << " job-s\n";
  else
    out << "no shutdown: " << m.jobs_left << " job(s) still queued or running at " << format_seconds(m.end_time)
        << " s\n";
  if (!r.workload.empty()) out << r.workload << "\n";
  if (m.background_jobs > 0) {
    out << "background: " << m.background_jobs << " trace job(s) (" << m.background_skipped << " left out";
    if (m.background_skipped_gpus > 0)
      out << ", " << m.background_skipped_gpus << " of them for more GPUs per node than any node has";
    out << "), " << m.background_started << " started, mean wait "
        << format_number(std::round(m.background_wait_mean_s)) << " s, "
        << format_number(std::round(m.background_core_share * 1000) / 10) << "% of the partition's cores busy, "
        << format_number(std::round(m.background_gpu_share * 1000) / 10) << "% of its GPUs held\n";
  }
  if (m.utilisation_samples > 0)
    out << "GPU use (mean of " << m.utilisation_samples << " samples): allocated "
        << format_number(std::round(m.gpu_allocation * 1000) / 10) << "%, VRAM booked "
        << format_number(std::round(m.sampled_vram_utilisation * 1000) / 10) << "%, fragmentation "
        << gpus_figure(m.gpu_fragmentation) << " GPUs ("
        << format_number(std::round(m.gpu_fragmentation_share * 1000) / 10) << "% of the GPUs)\n";
  if (m.sbatch_refusals > 0)
    out << "sbatch refused " << m.sbatch_refusals << " submission(s): " << m.sbatch_error << "\n";
  for (const auto& u : r.unplaced) out << "unplaced " << u.label << " " << u.request.dump() << ": " << u.reason << "\n";
  if (!r.unplaced.empty() || m.sbatch_refusals > 0)
    out << "idle allocation held meanwhile: " << format_number(std::round(m.idle_node_seconds))
        << " node-s of registered workers with nothing placed\n";
  print_serve_table(r.serving, out);
  // With serving, what the capacity cost (kept out of other summaries).
  if (!r.serving.empty() && !r.metrics.gpu_hours_by_model.empty()) {
    out << "GPU-hours held:";
    for (const auto& [model, h] : r.metrics.gpu_hours_by_model)
      out << " " << model << " " << format_number(std::round(h * 100) / 100);
    if (r.metrics.cost_usd) out << "; cost $" << format_number(std::round(*r.metrics.cost_usd * 100) / 100);
    else {
      out << "; cost unknown: no price for";
      for (const auto& u : r.metrics.unpriced) out << " " << u;
      out << " (set gpu_prices_usd_per_hour)";
    }
    out << "\n";
  }
  if (!r.status_lines.empty()) {
    out << "\n";
    for (const auto& l : r.status_lines) out << l << "\n";
  }
  for (const auto& p : r.critical_paths) {
    out << "\n";
    print_critical_path(p, out);
  }
  if (!r.expectations.empty()) {
    out << "\nexpectations:\n";
    for (const auto& e : r.expectations)
      out << "  " << (e.held ? "held  " : "FAILED") << " " << e.path
          << (e.name.empty() ? "" : " [" + e.name + "]") << " " << e.description << (e.held ? "" : ": " + e.why)
          << "\n";
  }
}

void print_comparison(const std::vector<RunResult>& runs, std::ostream& out,
                      const std::vector<std::size_t>& required) {
  if (runs.empty()) return;
  const int w0 = 42, w = 28;
  out << "scenario " << runs.front().scenario << "  seed " << runs.front().seed << "\n\n";
  out << std::left << std::setw(w0) << "";
  for (const auto& r : runs) out << std::setw(w) << r.policies;
  out << "\n";
  auto row = [&](const std::string& label, auto fn) {
    out << std::left << std::setw(w0) << label;
    for (const auto& r : runs) out << std::setw(w) << fn(r);
    out << "\n";
  };
  for (std::size_t i = 0; i < runs.front().apps.size(); ++i) {
    const std::string id = runs.front().apps[i].id;
    auto get = [&](const RunResult& r) -> const AppOutcome* {
      for (const auto& a : r.apps) if (a.id == id) return &a;
      return nullptr;
    };
    row(id + ": admitted", [&](const RunResult& r) { auto a = get(r); return a ? a->admitted : "-"; });
    row(id + ": time to RUNNING", [&](const RunResult& r) {
      auto a = get(r);
      return a && a->time_to_running ? format_seconds(*a->time_to_running) + "s" : std::string("never");
    });
    row(id + ": reservation", [&](const RunResult& r) { auto a = get(r); return a ? a->reservation : "-"; });
    row(id + ": final state", [&](const RunResult& r) { auto a = get(r); return a ? a->final_state : "-"; });
  }
  row("jobs submitted", [](const RunResult& r) { return std::to_string(r.metrics.jobs_submitted); });
  row("jobs cancelled", [](const RunResult& r) { return std::to_string(r.metrics.jobs_cancelled); });
  row("jobs left (after shutdown, else at end)", [](const RunResult& r) { return std::to_string(r.metrics.jobs_left); });
  row("orphaned allocation (job-s)", [](const RunResult& r) { return format_number(std::round(r.metrics.orphaned_job_seconds)); });
  row("expectations held", [](const RunResult& r) {
    long held = std::count_if(r.expectations.begin(), r.expectations.end(), [](const auto& e) { return e.held; });
    return std::to_string(held) + "/" + std::to_string(r.expectations.size());
  });
  for (std::size_t i : required) {
    const RunResult& r = runs.at(i);
    for (const auto& e : r.expectations)
      if (!e.held)
        out << "FAILED (" << r.policies << ") " << e.path << (e.name.empty() ? "" : " [" + e.name + "]") << " "
            << e.description << ": " << e.why << "\n";
  }
}

}  // namespace vramsim
