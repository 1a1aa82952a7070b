// vramsim-probe: proves a placed replica has a usable CUDA device (fp16 GEMM
// throughput as JSON) and prints the node's GPU inventory (--detect).
// Exit statuses: 0 ok, 2 bad arguments, 3 no CUDA device visible,
// 4 correctness check failed, 5 other runtime failure (see docs/probe.md).

#include <fstream>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "backends/cuda/error.hpp"
#include "backends/cuda/gpu_detector.hpp"
#include "backends/cuda/matmul_probe.hpp"
#include "backends/cuda/probe_options.hpp"
#include "backends/cuda/probe_report.hpp"
#include "backends/cuda/throughput.hpp"

namespace {

using vramsim::gpu::Error;
using vramsim::gpu::ExitCode;

int code(ExitCode c) { return static_cast<int>(c); }

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

int fail(const Error& error) {
  std::cerr << one_line(error.message) << std::endl;
  return code(vramsim::gpu::exit_code_for(error.kind));
}

// Prints the JSON on stdout and, when asked, also writes it to a file.
int emit(const nlohmann::ordered_json& j, const std::string& json_out) {
  const std::string text = j.dump();
  std::cout << text << std::endl;
  if (!json_out.empty()) {
    std::ofstream out(json_out, std::ios::trunc);
    out << text << '\n';
    out.close();
    if (!out) {
      std::cerr << "vramsim-probe: cannot write " << json_out << std::endl;
      return code(ExitCode::RuntimeFailure);
    }
  }
  return code(ExitCode::Ok);
}

}  // namespace

int main(int argc, char** argv) {
  vramsim::gpu::ProbeOptions options;
  bool detect = false;
  std::string json_out;
  std::string peak_for;

  CLI::App app{"fp16 GEMM probe of the first visible CUDA device, and GPU detection", "vramsim-probe"};
  app.add_option("-n,--n", options.n, "GEMM size N (C = A*B, all N x N fp16)")->capture_default_str();
  app.add_option("--iterations", options.iterations, "minimum GEMMs per timed sample")->capture_default_str();
  app.add_option("--warmup", options.warmup, "minimum untimed GEMMs before timing")->capture_default_str();
  app.add_option("--check-n", options.check_n, "size of the correctness run against the CPU reference")
      ->capture_default_str();
  app.add_option("--samples", options.samples, "timed samples (median and spread reported)")->capture_default_str();
  app.add_option("--sample-ms", options.sample_ms, "minimum duration of each timed sample, ms")->capture_default_str();
  app.add_option("--warmup-ms", options.warmup_ms, "minimum untimed GEMM time before sampling, ms")
      ->capture_default_str();
  app.add_option("--check-samples", options.check_samples,
                 "rows and columns of the timed output checked against the CPU")->capture_default_str();
  app.add_flag("--detect", detect, "print the GPU inventory as JSON and exit");
  app.add_option("--json-out", json_out, "also write the JSON to FILE")->type_name("FILE");
  app.add_option("--peak-for", peak_for, "print the dense fp16 peak TFLOPS known for a device name and exit")
      ->type_name("NAME");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "vramsim-probe: " << one_line(e.what()) << std::endl;
    return code(ExitCode::BadArguments);
  }

  if (!peak_for.empty()) {
    nlohmann::ordered_json j;
    j["name"] = peak_for;
    const auto peak = vramsim::gpu::dense_fp16_peak_tflops(peak_for);
    j["dense_fp16_tflops"] = peak ? nlohmann::ordered_json(*peak) : nlohmann::ordered_json(nullptr);
    return emit(j, json_out);
  }

  if (detect) {
    const auto detector = vramsim::gpu::make_default_detector();
    const auto inventory = detector->detect();
    if (!inventory) return fail(inventory.error());
    if (inventory->devices.empty()) {
      return fail(vramsim::gpu::no_device_error(std::string(detector->name()) + " found no devices"));
    }
    return emit(vramsim::gpu::to_json(*inventory), json_out);
  }

  if (auto error = vramsim::gpu::validate(options)) {
    std::cerr << "vramsim-probe: " << error->message << std::endl;
    return code(ExitCode::BadArguments);
  }
  const auto report = vramsim::gpu::run_matmul_probe(options);
  if (!report) return fail(report.error());
  return emit(vramsim::gpu::to_json(*report), json_out);
}
