#include "models/admission.hpp"

#include "engine/format.hpp"

#include "models/registry.hpp"

namespace vramsim {

// VRAM_MB is deliberately not checked here, as in the reference system.
bool node_has_room(const AppDemand& app, const AdmissionSnapshot& s) {
  return s.nodes.any([&](const NodeHeadroom& n) {
    return !n.head && n.free_cpu >= app.cpus && n.free_gpu >= app.gpus && n.free_memory >= app.memory;
  });
}

bool defaults_fit(const AppDemand& app, const WorkerDefaults& d) {
  return d.cpus >= app.cpus && d.gpus >= app.gpus &&
         static_cast<double>(d.mem_per_cpu_gb) * d.cpus * kGiB >= app.memory;
}

std::string insufficient_message(const AppDemand& app) {
  return "Insufficient resources for application '" + app.app_id + "'. Requested: {'num_cpus': " +
         format_number(app.cpus) + ", 'num_gpus': " + format_number(app.gpus) + ", 'memory': " + format_number(app.memory) +
         "}";
}

namespace {

AdmissionDecision reject(const AppDemand& app) { return {false, "insufficient", insufficient_message(app)}; }

// legacy: a submitted-but-unregistered job is invisible to the node scan and
// still counts against max_workers, so a cold deploy that triggered its own
// scale-up is rejected.
class LegacyAdmission final : public AdmissionPolicy {
 public:
  AdmissionDecision check(const AppDemand& app, const AdmissionSnapshot& s) const override {
    if (node_has_room(app, s)) return {true, "node_with_room", ""};
    if (s.slurm_mode && s.worker_jobs < s.max_workers && defaults_fit(app, s.defaults))
      return {true, "can_spawn_worker", ""};
    return reject(app);
  }
};

// fixed: jobs with no registered node are capacity in flight.
class FixedAdmission final : public AdmissionPolicy {
 public:
  AdmissionDecision check(const AppDemand& app, const AdmissionSnapshot& s) const override {
    if (node_has_room(app, s)) return {true, "node_with_room", ""};
    if (s.slurm_mode && defaults_fit(app, s.defaults)) {
      if (s.worker_jobs < s.max_workers) return {true, "can_spawn_worker", ""};
      if (s.unregistered_jobs > 0) return {true, "capacity_in_flight", ""};
    }
    return reject(app);
  }
};

}  // namespace

void register_admission_policies(PolicyRegistry& r) {
  r.add<AdmissionPolicy, LegacyAdmission>("legacy");
  r.add<AdmissionPolicy, FixedAdmission>("fixed");
}

}  // namespace vramsim
