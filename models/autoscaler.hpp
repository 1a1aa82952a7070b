#pragma once
// Autoscaler decisions (reference-semantics section 5): one call per monitor
// tick over a snapshot; the caller submits, stops and cancels. Time is passed
// in; the policy never reads a clock.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/cluster_state.hpp"
#include "engine/resources.hpp"
#include "models/idle_history.hpp"
#include "models/pending.hpp"
#include "models/worker_defaults.hpp"

namespace vramsim {

struct AutoscalerConfig {
  int min_workers = 0;
  int max_workers = 4;  // SlurmWorkers(max_workers=4), slurm_workers.py:57
  Duration scale_up_cooldown = 60 * kSecond;
  Duration scale_down_check_interval = 60 * kSecond;
  Duration scale_down_threshold = 300 * kSecond;
  WorkerDefaults defaults;
};

struct AutoscalerSnapshot {
  SimTime now = 0;
  // Pending demand, oldest first, in the three lists the status exposes.
  RequestList actors, tasks, jobs;
  bool creation_in_flight = false;
  std::optional<SimTime> last_scale_up;
  // None: never checked (the real loop's last-check time starts at the
  // epoch), so the first tick checks.
  std::optional<SimTime> last_scale_down_check;
  int worker_jobs = 0;   // squeue jobs minus deletions in progress
  // The status history; its newest sample is the current status.
  const IdleHistory* history = nullptr;
};

struct ScaleDecision {
  enum class Action { None, ScaleUp, ScaleDown, Error };
  Action action = Action::None;
  WorkerJobSize job;                   // ScaleUp
  ResourceSet demand;                  // what triggered it
  std::vector<WorkerUsage> remove;     // ScaleDown
  Duration idle_for = 0;               // ScaleDown
  bool scale_down_checked = false;     // the check interval restarts
  // Why nothing happened, or the error: a literal (static storage), so that
  // the pass that decides nothing, some 8,640 a day, allocates nothing.
  std::string_view note;
};

class AutoscalerPolicy {
 public:
  static constexpr const char* kModel = "autoscaler";
  virtual ~AutoscalerPolicy() = default;
  virtual ScaleDecision decide(const AutoscalerSnapshot& s, const AutoscalerConfig& cfg) const = 0;
};

// The first pending item with non-empty required resources: actors, then
// tasks, then jobs; newest first within a list. Actors asking for nothing are
// skipped.
std::optional<ResourceSet> select_demand(const AutoscalerSnapshot& s);
// Whether anything pending is demand: an actor asking for CPU, GPU or
// memory, or any task or job (the variants scale up only then).
bool has_pending_demand(const AutoscalerSnapshot& s);
// Scale-down over the status history; shared by the variants.
ScaleDecision decide_scale_down(const AutoscalerSnapshot& s, const AutoscalerConfig& cfg);

}  // namespace vramsim
