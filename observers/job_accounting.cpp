#include "observers/job_accounting.hpp"

#include <vector>

#include "engine/stats.hpp"

namespace vramsim {

TraceKindSet JobAccounting::kinds() const {
  return kinds_of({TraceKind::job_submitted, TraceKind::job_started, TraceKind::job_ended, TraceKind::scale_up,
                   TraceKind::scale_down, TraceKind::device_vram_overbooked, TraceKind::shutdown_done,
                   TraceKind::job_rejected, TraceKind::admission});
}

void JobAccounting::on_event(const TraceEvent& e) {
  switch (e.kind) {
    case TraceKind::scale_up: ++m_.scale_ups; return;
    case TraceKind::scale_down: ++m_.scale_downs; return;
    case TraceKind::device_vram_overbooked: ++m_.device_overbookings; return;
    case TraceKind::shutdown_done: m_.jobs_left = static_cast<int>(e["jobs_left"].size()); return;
    case TraceKind::job_rejected:
      if (m_.sbatch_refusals++ == 0) m_.sbatch_error = e["error"].get<std::string>();
      return;
    case TraceKind::admission:
      if (!e["admitted"].get<bool>()) ++m_.rejected_deployments;
      return;
    default: break;
  }
  // Job events: the GPU time each job held, and how long it queued (workers
  // up at t=0 never did).
  Job& j = jobs_[e["job"].get<std::string>()];
  if (e.kind == TraceKind::job_submitted) {
    j.gpus = e["gpus"].get<double>();
    if (!e.fields.contains("warm")) {
      j.submitted = e.t;
      ++m_.jobs_submitted;
    }
  } else if (e.kind == TraceKind::job_started) {
    j.started = e.t;
  } else if (!j.ended) {
    j.ended = e.t;
  }
}

void JobAccounting::measure(RunResult& result) {
  RunMetrics& m = result.metrics;
  m.jobs_submitted = m_.jobs_submitted;
  m.scale_ups = m_.scale_ups;
  m.scale_downs = m_.scale_downs;
  m.device_overbookings = m_.device_overbookings;
  m.jobs_left = m_.jobs_left;
  m.sbatch_refusals = m_.sbatch_refusals;
  m.sbatch_error = m_.sbatch_error;
  m.rejected_deployments = m_.rejected_deployments;
  std::vector<double> waits;
  for (const auto& [id, j] : jobs_) {
    if (!j.started) continue;
    m.gpu_hours_allocated += j.gpus * to_seconds(j.ended.value_or(end_) - *j.started) / 3600;
    if (j.submitted) waits.push_back(to_seconds(*j.started - *j.submitted));
  }
  if (!waits.empty()) {
    double sum = 0;
    for (double w : waits) sum += w;
    m.queue_wait_mean_s = sum / static_cast<double>(waits.size());
  }
  m.queue_wait_p95_s = nearest_rank_percentile(waits, 95);
}

}  // namespace vramsim
