// The nlohmann::json views of the probe's results for the project's callers.
// Each view parses the line the probe itself prints, so key order and number
// formatting have one definition (probe_report.cpp, gpu_inventory.cpp).
// Not part of the probe's standalone build.

#include <string>
#include <utility>

#include "backends/cuda/gpu_inventory.hpp"
#include "backends/cuda/probe_report.hpp"

namespace vramsim::gpu {

nlohmann::ordered_json to_json(const ProbeReport& report) { return nlohmann::ordered_json::parse(report_json(report)); }

nlohmann::ordered_json to_json(const GpuInventory& inventory) {
  return nlohmann::ordered_json::parse(inventory_json(inventory));
}

namespace {

Error bad_report(const std::string& what) {
  return Error{ErrorKind::DetectionFailed, "probe report: " + what};
}

}  // namespace

Expected<ProbeReport> report_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return bad_report("not a JSON object");
  ProbeReport r;
  auto need = [&](const char* key) -> const nlohmann::json* {
    auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
  };
  const auto* gpu = need("gpu");
  if (!gpu || !gpu->is_string()) return bad_report("'gpu' must be a string");
  r.gpu = gpu->get<std::string>();
  const auto* total = need("gpu_total_mb");
  if (!total || !total->is_number_integer()) return bad_report("'gpu_total_mb' must be an integer");
  r.gpu_total_mb = total->get<std::int64_t>();
  const auto* visible = need("visible_devices");
  if (!visible || !visible->is_string()) return bad_report("'visible_devices' must be a string");
  r.visible_devices = visible->get<std::string>();
  const auto* tflops = need("matmul_tflops");
  if (!tflops || !tflops->is_number()) return bad_report("'matmul_tflops' must be a number");
  r.matmul_tflops = tflops->get<double>();
  const auto* peak = need("peak_alloc_mb");
  if (!peak || !peak->is_number_integer()) return bad_report("'peak_alloc_mb' must be an integer");
  r.peak_alloc_mb = peak->get<std::int64_t>();
  if (const auto* n = need("n")) {
    if (!n->is_number_integer()) return bad_report("'n' must be an integer");
    r.n = n->get<std::int64_t>();
  }
  if (const auto* it = need("iterations")) {
    if (!it->is_number_integer()) return bad_report("'iterations' must be an integer");
    r.iterations = it->get<int>();
  }
  auto number = [&](const char* key, double& out) -> bool {
    const auto* v = need(key);
    if (!v) return true;
    if (!v->is_number()) return false;
    out = v->get<double>();
    return true;
  };
  if (const auto* s = need("samples")) {
    if (!s->is_number_integer()) return bad_report("'samples' must be an integer");
    r.samples = s->get<int>();
  }
  for (auto [key, out] : {std::pair<const char*, double*>{"tflops_min", &r.tflops_min},
                          {"tflops_max", &r.tflops_max},
                          {"spread_pct", &r.spread_pct},
                          {"sample_ms", &r.sample_ms},
                          {"warmup_ms", &r.warmup_ms}})
    if (!number(key, *out)) return bad_report("'" + std::string(key) + "' must be a number");
  if (const auto* c = need("sm_clock_mhz"); c && !c->is_null()) {
    if (!c->is_number_integer()) return bad_report("'sm_clock_mhz' must be an integer or null");
    r.sm_clock_mhz = c->get<int>();
  }
  if (const auto* c = need("checked_elements")) {
    if (!c->is_number_integer()) return bad_report("'checked_elements' must be an integer");
    r.checked_elements = c->get<std::int64_t>();
  }
  if (const auto* c = need("sm_clock_source")) {
    if (!c->is_string()) return bad_report("'sm_clock_source' must be a string");
    r.sm_clock_source = c->get<std::string>();
  }
  return r;
}

}  // namespace vramsim::gpu
