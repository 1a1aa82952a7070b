#include "models/autoscaler.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "models/registry.hpp"

namespace vramsim {

std::optional<ResourceSet> select_demand(const AutoscalerSnapshot& s) {
  for (const auto* list : {&s.actors, &s.tasks, &s.jobs}) {
    const bool actors = list == &s.actors;
    const ResourceSet* r = list->find_newest([actors](const ResourceSet& r) {
      return !r.empty() && (!actors || r.has(kCPUId) || r.has(kGPUId) || r.has(kMemoryId));
    });
    if (r) return *r;
  }
  return std::nullopt;
}

bool is_idle(const WorkerUsage& w) {
  const double used_gpu = w.total_gpu > 0 ? w.used_gpu : 0.0;
  return w.used_cpu == 0 && used_gpu == 0;
}

ScaleDecision decide_scale_down(const AutoscalerSnapshot& s, const AutoscalerConfig& cfg) {
  ScaleDecision d;
  const bool due = !s.last_scale_down_check || s.now - *s.last_scale_down_check > cfg.scale_down_check_interval;
  if (!s.history || !due ||
      s.worker_jobs <= cfg.min_workers) {
    d.note = "scale-down not due";
    return d;
  }
  d.scale_down_checked = true;
  // Walk the history newest first, keeping the nodes idle in every sample.
  std::set<std::string> candidates;
  Duration max_idle = 0;
  bool first = true;
  for (auto it = s.history->rbegin(); it != s.history->rend(); ++it) {
    std::set<std::string> idle;
    for (const auto& w : it->workers)
      if (is_idle(w)) idle.insert(w.node_id);
    if (idle.empty()) break;
    const Duration idle_time = s.now - it->t;
    if (first) {
      candidates = idle;
      first = false;
    } else {
      std::set<std::string> overlap;
      std::set_intersection(candidates.begin(), candidates.end(), idle.begin(), idle.end(),
                            std::inserter(overlap, overlap.begin()));
      if (overlap.empty()) break;
      candidates = overlap;
    }
    max_idle = idle_time;
    if (idle_time > cfg.scale_down_threshold) break;
  }
  if (candidates.empty() || max_idle <= cfg.scale_down_threshold) {
    d.note = "no worker idle beyond the threshold";
    return d;
  }
  // Double-check against the current status before removing.
  for (const auto& w : s.workers)
    if (candidates.count(w.node_id) && is_idle(w)) d.remove.push_back(w);
  if (!d.remove.empty()) {
    d.action = ScaleDecision::Action::ScaleDown;
    d.idle_for = max_idle;
  }
  return d;
}

namespace {

// Sizes the worker job from one pending request. `vram_aware` is the fix for
// VRAM-only demand; `guard_zero_cpu` the fix for the CPU divisor.
ScaleDecision decide_common(const AutoscalerSnapshot& s, const AutoscalerConfig& cfg,
                            bool vram_aware, bool guard_zero_cpu) {
  const bool pending = !s.actors.empty() || !s.tasks.empty() || !s.jobs.empty();
  if (!pending) return decide_scale_down(s, cfg);

  ScaleDecision d;
  if (s.creation_in_flight) { d.note = "worker creation in flight"; return d; }
  if (s.last_scale_up && s.now - *s.last_scale_up <= cfg.scale_up_cooldown) { d.note = "cooldown"; return d; }
  if (s.worker_jobs >= cfg.max_workers) { d.note = "at max_workers"; return d; }
  auto req = select_demand(s);
  if (!req) { d.note = "no pending resources found"; return d; }

  double cpus = req->stated(kCPU) ? req->get(kCPU) : 1.0;  // req.get("CPU", 1)
  if (cpus <= 0) {
    if (!guard_zero_cpu) {
      d.action = ScaleDecision::Action::Error;
      d.note = "ZeroDivisionError: memory / num_cpus with a pending CPU request of 0";
      return d;
    }
    cpus = 1.0;
  }
  double gpus = req->get(kGPU);
  if (vram_aware) {
    if (req->has(kVramMB) && gpus < 1) gpus = 1;
  } else {
    gpus = std::trunc(gpus);  // --gpus takes an int: 0.01 becomes 0
  }
  const double memory_gb = req->get(kMemory) / kGiB;
  int mem_per_cpu = static_cast<int>(std::ceil(memory_gb / cpus));

  d.job.cpus = std::max(static_cast<int>(std::ceil(cpus)), cfg.defaults.cpus);
  d.job.gpus = std::max(static_cast<int>(std::ceil(gpus)), cfg.defaults.gpus);
  d.job.mem_per_cpu_gb = std::max(mem_per_cpu, cfg.defaults.mem_per_cpu_gb);
  d.job.time_limit = cfg.defaults.time_limit;
  d.job.extra_sbatch_args = cfg.defaults.extra_sbatch_args;
  d.demand = *req;
  d.action = ScaleDecision::Action::ScaleUp;
  return d;
}

class LegacyAutoscaler final : public AutoscalerPolicy {
 public:
  ScaleDecision decide(const AutoscalerSnapshot& s, const AutoscalerConfig& cfg) const override {
    return decide_common(s, cfg, false, false);
  }
};

class FixedAutoscaler final : public AutoscalerPolicy {
 public:
  ScaleDecision decide(const AutoscalerSnapshot& s, const AutoscalerConfig& cfg) const override {
    return decide_common(s, cfg, true, true);
  }
};

}  // namespace

void register_autoscaler_policies(PolicyRegistry& r) {
  r.add<AutoscalerPolicy, LegacyAutoscaler>("legacy");
  r.add<AutoscalerPolicy, FixedAutoscaler>("fixed");
}

}  // namespace vramsim
