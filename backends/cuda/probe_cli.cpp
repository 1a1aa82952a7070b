#include "backends/cuda/probe_cli.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <sstream>

namespace vramsim::gpu {

namespace {

Error bad(const std::string& message) { return Error{ErrorKind::InvalidArgument, message}; }

template <class Int>
std::optional<Error> to_int(const std::string& option, const std::string& text, Int& out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  if (text.empty() || ec != std::errc() || ptr != end)
    return bad(option + ": expected an integer, got '" + text + "'");
  return std::nullopt;
}

std::optional<Error> to_double(const std::string& option, const std::string& text, double& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(out))
    return bad(option + ": expected a number, got '" + text + "'");
  return std::nullopt;
}

struct ValueOption {
  const char* name;
  const char* meta;
  const char* help;
  std::function<std::optional<Error>(ProbeCommand&, const std::string& option, const std::string& value)> set;
};

const std::vector<ValueOption>& value_options() {
  static const std::vector<ValueOption> v = {
      {"--n", "N", "GEMM size N (C = A*B, all N x N fp16); default 8192",
       [](ProbeCommand& c, const std::string& o, const std::string& s) { return to_int(o, s, c.options.n); }},
      {"--iterations", "I", "minimum GEMMs per timed sample; default 10",
       [](ProbeCommand& c, const std::string& o, const std::string& s) { return to_int(o, s, c.options.iterations); }},
      {"--warmup", "W", "minimum untimed GEMMs before timing; default 3",
       [](ProbeCommand& c, const std::string& o, const std::string& s) { return to_int(o, s, c.options.warmup); }},
      {"--check-n", "C", "size of the correctness run against the CPU reference; default 256",
       [](ProbeCommand& c, const std::string& o, const std::string& s) { return to_int(o, s, c.options.check_n); }},
      {"--samples", "S", "timed samples (median and spread reported); default 5",
       [](ProbeCommand& c, const std::string& o, const std::string& s) { return to_int(o, s, c.options.samples); }},
      {"--sample-ms", "T", "minimum duration of each timed sample, ms; default 200",
       [](ProbeCommand& c, const std::string& o, const std::string& s) { return to_double(o, s, c.options.sample_ms); }},
      {"--warmup-ms", "T", "minimum untimed GEMM time before sampling, ms; default 2000",
       [](ProbeCommand& c, const std::string& o, const std::string& s) { return to_double(o, s, c.options.warmup_ms); }},
      {"--check-samples", "K", "rows and columns of the timed output checked against the CPU; default 16",
       [](ProbeCommand& c, const std::string& o, const std::string& s) {
         return to_int(o, s, c.options.check_samples);
       }},
      {"--json-out", "FILE", "also write the JSON to FILE",
       [](ProbeCommand& c, const std::string&, const std::string& s) -> std::optional<Error> {
         c.json_out = s;
         return std::nullopt;
       }},
      {"--peak-for", "NAME", "print the dense fp16 peak TFLOPS the GPU table holds for a device name and exit",
       [](ProbeCommand& c, const std::string&, const std::string& s) -> std::optional<Error> {
         c.peak_for = s;
         return std::nullopt;
       }},
  };
  return v;
}

}  // namespace

Expected<ProbeCommand> parse_probe_args(const std::vector<std::string>& args) {
  ProbeCommand cmd;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "-h" || arg == "--help") {
      cmd.help = true;
      continue;
    }
    if (arg == "--detect") {
      cmd.detect = true;
      continue;
    }
    if (arg.rfind("-n", 0) == 0 && (arg.size() == 2 || arg[2] == '=')) arg = "--n" + arg.substr(2);
    if (arg.rfind("--", 0) != 0) return bad("unexpected argument '" + arg + "' (options start with --)");
    std::string name = arg;
    std::optional<std::string> value;
    if (const auto eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    const ValueOption* option = nullptr;
    for (const auto& o : value_options())
      if (name == o.name) option = &o;
    if (option == nullptr) return bad("unknown option '" + name + "' (see --help)");
    if (!value) {
      // A following option is not taken as the value: "--json-out --detect" is a mistake.
      if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0)
        return bad(name + ": expected a value " + option->meta);
      value = args[++i];
    }
    if (auto err = option->set(cmd, name, *value)) return *err;
  }
  return cmd;
}

std::string probe_usage() {
  std::ostringstream out;
  out << "vramsim-probe: fp16 GEMM probe of the first visible CUDA device, and GPU detection\n"
         "usage: vramsim-probe [options]\n"
         "       vramsim-probe --detect [--json-out FILE]\n"
         "       vramsim-probe --peak-for NAME\n"
         "options:\n";
  for (const auto& o : value_options()) {
    std::string left = std::string("  ") + o.name + " " + o.meta;
    if (o.name == std::string("--n")) left = "  -n, --n N";
    out << left << std::string(left.size() < 24 ? 24 - left.size() : 1, ' ') << o.help << "\n";
  }
  out << "  --detect              print the GPU inventory as JSON and exit\n"
         "  -h, --help            print this help and exit\n"
         "exit status: 0 ok, 2 bad arguments, 3 no usable CUDA (no device, no driver, no cuBLASLt),\n"
         "             4 correctness check failed, 5 other CUDA failure, 6 out of device memory\n";
  return out.str();
}

}  // namespace vramsim::gpu
