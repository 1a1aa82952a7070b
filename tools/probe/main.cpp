// vramsim-probe: proves a placed replica has a usable CUDA device (fp16 GEMM
// throughput as JSON) and prints the node's GPU inventory (--detect).
// Exit statuses: 0 ok, 2 bad arguments, 3 no usable CUDA (no device, no
// driver, no cuBLASLt), 4 correctness check failed, 5 other runtime failure,
// 6 out of device memory (see docs/probe.md). Standard library and the CUDA
// toolkit only, so it also builds alone (tools/probe/standalone).

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "backends/cuda/error.hpp"
#include "backends/cuda/gpu_detector.hpp"
#include "backends/cuda/json_line.hpp"
#include "backends/cuda/matmul_probe.hpp"
#include "backends/cuda/probe_cli.hpp"
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
int emit(const std::string& text, const std::string& json_out) {
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

// The GPU table's row for a device name: the fp32-accumulate peak the probe
// is measured against, the fp16-accumulate one, and the source.
std::string peak_json(const std::string& name) {
  using vramsim::Accumulate;
  const auto fp32 = vramsim::gpu::dense_fp16_peak_tflops(name, Accumulate::Fp32);
  const auto fp16 = vramsim::gpu::dense_fp16_peak_tflops(name, Accumulate::Fp16);
  vramsim::gpu::JsonLine j;
  j.str("name", name).num("dense_fp16_tflops", fp32).str("accumulate", "fp32").num("fp16_accumulate_tflops", fp16);
  const auto* row = vramsim::find_gpu_peak(name);
  if (row != nullptr && (fp32 || fp16)) {
    j.str("source", row->source);
  } else {
    j.null("source");
  }
  return j.done();
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const auto parsed = vramsim::gpu::parse_probe_args(args);
  if (!parsed) {
    std::cerr << "vramsim-probe: " << one_line(parsed.error().message) << std::endl;
    return code(ExitCode::BadArguments);
  }
  const auto& cmd = *parsed;
  if (cmd.help) {
    std::cout << vramsim::gpu::probe_usage();
    return code(ExitCode::Ok);
  }

  if (cmd.peak_for) return emit(peak_json(*cmd.peak_for), cmd.json_out);

  if (cmd.detect) {
    const auto detector = vramsim::gpu::make_default_detector();
    const auto inventory = detector->detect();
    if (!inventory) return fail(inventory.error());
    if (inventory->devices.empty()) {
      return fail(vramsim::gpu::no_device_error(std::string(detector->name()) + " found no devices"));
    }
    return emit(vramsim::gpu::inventory_json(*inventory), cmd.json_out);
  }

  if (auto error = vramsim::gpu::validate(cmd.options)) {
    std::cerr << "vramsim-probe: " << error->message << std::endl;
    return code(ExitCode::BadArguments);
  }
  const auto report = vramsim::gpu::run_matmul_probe(cmd.options);
  if (!report) return fail(report.error());
  return emit(vramsim::gpu::report_json(*report), cmd.json_out);
}
