#include "observers/app_outcomes.hpp"

#include <map>
#include <vector>

#include "engine/format.hpp"
#include "engine/stats.hpp"

namespace vramsim {
namespace {

std::string reservation_shape(const AppRecord& a) {
  if (!a.sizing.error.empty()) return "error";
  if (a.sizing.branch.empty()) return "-";
  if (a.sizing.num_gpus == 0) return "no GPU";
  std::string s = format_number(a.sizing.num_gpus) + " GPU";
  if (a.sizing.vram_mb) s += " + " + std::to_string(*a.sizing.vram_mb) + " MB VRAM_MB";
  return s;
}

}  // namespace

void AppOutcomes::measure(RunResult& result) {
  RunMetrics& m = result.metrics;
  std::map<std::string, Duration> to_running;
  for (const auto& a : to_running_.apps())
    if (a.running) to_running.emplace(a.app, *a.running - a.requested);
  for (const auto& [id, app] : ctx().control.apps()) {
    AppOutcome o;
    o.id = id;
    o.admitted = !app.admitted ? "pending" : (*app.admitted ? "admitted" : "rejected");
    o.final_state = name(app.life.state());
    if (auto t = to_running.find(id); t != to_running.end()) o.time_to_running = t->second;
    o.reservation = reservation_shape(app);
    o.message = app.message;
    result.apps.push_back(o);
  }
  std::vector<double> ttr;
  for (const auto& a : result.apps)
    if (a.time_to_running) ttr.push_back(to_seconds(*a.time_to_running));
  m.ttr_p50_s = nearest_rank_percentile(ttr, 50);
  m.ttr_p95_s = nearest_rank_percentile(ttr, 95);
  m.ttr_p99_s = nearest_rank_percentile(ttr, 99);
  m.apps_deployed = static_cast<int>(result.apps.size());
  m.apps_running = static_cast<int>(ttr.size());
}

}  // namespace vramsim
