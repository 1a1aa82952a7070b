#include "models/admission.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "engine/format.hpp"

#include "models/registry.hpp"

namespace vramsim {

// VRAM_MB is deliberately not checked here, as in the reference system.
bool node_has_room(const AppDemand& app, const AdmissionSnapshot& s) {
  const AppResources& back = s.add_back;
  // free = max(0, total - max(0, used - back)) with used = total - free.
  auto with_back = [](double free, double total, double add) { return add > 0 ? std::min(total, free + add) : free; };
  return s.nodes.any([&](const NodeHeadroom& n) {
    if (n.head || with_back(n.free_cpu, n.total_cpu, back.cpus) < app.cpus ||
        with_back(n.free_gpu, n.total_gpu, back.gpus) < app.gpus ||
        with_back(n.free_memory, n.total_memory, back.memory) < app.memory)
      return false;
    for (const auto& [name, amount] : app.custom)
      if (!n.available || n.available->get_amount(name) < to_amount(amount)) return false;
    return true;
  });
}

bool defaults_fit(const AppDemand& app, const WorkerDefaults& d) {
  return d.cpus >= app.cpus && d.gpus >= app.gpus &&
         static_cast<double>(d.mem_per_cpu_gb) * d.cpus * kGiB >= app.memory;
}

std::string python_float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  const double a = std::fabs(x);
  const bool sci = a != 0 && (a < 1e-4 || a >= 1e16);
  auto r = std::to_chars(buf, buf + sizeof buf, x, sci ? std::chars_format::scientific : std::chars_format::fixed);
  std::string s(buf, r.ptr);
  if (sci) {
    // C's "1e-05" spelling: a sign and at least two exponent digits.
    const auto e = s.find('e');
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    const char sign = exp[0] == '-' ? '-' : '+';
    if (exp[0] == '-' || exp[0] == '+') exp.erase(0, 1);
    if (exp.size() < 2) exp.insert(0, "0");
    return mant + "e" + sign + exp;
  }
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}

std::string insufficient_message(const AppDemand& app, RequestedDict style) {
  auto py_int = [](double v) { return std::to_string(static_cast<long long>(std::trunc(v))); };
  // _sum_resources at fba5ffe (builder.py:383-406) returns four keys, each
  // int()ed; the fix keeps num_gpus a float (840e77d).
  std::string dict = "{'num_cpus': " + py_int(app.cpus) + ", 'num_gpus': " +
                     (style == RequestedDict::Fixed ? python_float_repr(app.gpus) : py_int(app.gpus)) +
                     ", 'memory': " + py_int(app.memory) + ", 'VRAM_MB': " + py_int(app.vram_mb);
  return "Insufficient resources for application '" + app.app_id + "'. Requested: " + dict + "}";
}

namespace {

AdmissionDecision reject(const AppDemand& app, RequestedDict style) {
  return {false, "insufficient", insufficient_message(app, style)};
}

// legacy: a submitted-but-unregistered job is invisible to the node scan and
// still counts against max_workers, so a cold deploy that triggered its own
// scale-up is rejected.
class LegacyAdmission final : public AdmissionPolicy {
 public:
  AdmissionDecision check(const AppDemand& app, const AdmissionSnapshot& s) const override {
    if (node_has_room(app, s)) return {true, "node_with_room", ""};
    if (s.slurm_mode && s.worker_jobs < s.max_workers && defaults_fit(app, s.defaults))
      return {true, "can_spawn_worker", ""};
    return reject(app, RequestedDict::Legacy);
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
    return reject(app, RequestedDict::Fixed);
  }
};

}  // namespace

void register_admission_policies(PolicyRegistry& r) {
  r.add<AdmissionPolicy, LegacyAdmission>("legacy");
  r.add<AdmissionPolicy, FixedAdmission>("fixed");
}

}  // namespace vramsim
