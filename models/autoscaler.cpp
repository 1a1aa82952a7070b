#include "models/autoscaler.hpp"

#include <algorithm>
#include <cmath>

#include "models/registry.hpp"

namespace vramsim {

namespace {
// ProxyActor._get_pending_actors keeps an actor only if it asks for CPU, GPU
// or memory.
bool actor_counts(const ResourceSet& r) { return r.has(kCPUId) || r.has(kGPUId) || r.has(kMemoryId); }
}  // namespace

std::optional<ResourceSet> select_demand(const AutoscalerSnapshot& s) {
  for (const auto* list : {&s.actors, &s.tasks, &s.jobs}) {
    const bool actors = list == &s.actors;
    const ResourceSet* r = list->find_newest([actors](const ResourceSet& r) {
      return !r.empty() && (!actors || actor_counts(r));
    });
    if (r) return *r;
  }
  return std::nullopt;
}

bool has_pending_demand(const AutoscalerSnapshot& s) {
  return s.actors.find_newest(actor_counts) != nullptr || !s.tasks.empty() || !s.jobs.empty();
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
  // The workers idle in every sample from the newest back to the newest one
  // older than the threshold, as a walk over the samples newest first finds
  // them; the newest sample is the current status, so they are idle now.
  const auto since = s.history->newest_sample_before(s.now - cfg.scale_down_threshold);
  if (since)
    for (const WorkerUsage* w : s.history->idle_since(*since)) d.remove.push_back(*w);
  if (d.remove.empty()) {
    d.note = "no worker idle beyond the threshold";
    return d;
  }
  d.action = ScaleDecision::Action::ScaleDown;
  d.idle_for = s.now - *since;
  return d;
}

namespace {

// Sizes the worker job from one pending request. `vram_aware` is the fix for
// VRAM-only demand; `guard_zero_cpu` the fix for the CPU divisor.
ScaleDecision decide_common(const AutoscalerSnapshot& s, const AutoscalerConfig& cfg,
                            bool vram_aware, bool guard_zero_cpu) {
  // Actors asking for nothing are no demand; pending tasks and jobs all count.
  if (!has_pending_demand(s)) return decide_scale_down(s, cfg);

  ScaleDecision d;
  if (s.creation_in_flight) { d.note = "worker creation in flight"; return d; }
  if (s.last_scale_up && s.now - *s.last_scale_up <= cfg.scale_up_cooldown) { d.note = "cooldown"; return d; }
  if (s.worker_jobs >= cfg.max_workers) { d.note = "at max_workers"; return d; }
  auto req = select_demand(s);
  if (!req) {
    // _check_scale_up: nothing pending states its resources.
    d.note = "No pending resources with explicit requirements found; scaling up with defaults.";
    req = ResourceSet{};
  }

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

  // Raised to the defaults, then int() (_add_worker): 1.5 GPUs ask for 1.
  d.job.cpus = static_cast<int>(std::max(cpus, static_cast<double>(cfg.defaults.cpus)));
  d.job.gpus = static_cast<int>(std::max(gpus, static_cast<double>(cfg.defaults.gpus)));
  d.job.mem_per_cpu_gb = std::max(mem_per_cpu, cfg.defaults.mem_per_cpu_gb);
  d.job.time_limit = cfg.defaults.time_limit;
  d.job.extra_sbatch_args = cfg.defaults.extra_sbatch_args;
  d.job.slurm = cfg.defaults.slurm;
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
