#include "backends/cuda/probe_report.hpp"

#include <cmath>

namespace vramsim::gpu {

double round_tenth(double value) { return std::round(value * 10.0) / 10.0; }

nlohmann::ordered_json to_json(const ProbeReport& report) {
  nlohmann::ordered_json j;
  j["gpu"] = report.gpu;
  j["gpu_total_mb"] = report.gpu_total_mb;
  j["visible_devices"] = report.visible_devices;
  j["matmul_tflops"] = round_tenth(report.matmul_tflops);
  j["peak_alloc_mb"] = report.peak_alloc_mb;
  j["n"] = report.n;
  j["iterations"] = report.iterations;
  return j;
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
  return r;
}

}  // namespace vramsim::gpu
