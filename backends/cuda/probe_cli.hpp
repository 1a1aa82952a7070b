#pragma once

// vramsim-probe's command line, parsed with the standard library only so the
// probe builds without CLI11 (tools/probe/standalone).

#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/error.hpp"
#include "backends/cuda/probe_options.hpp"

namespace vramsim::gpu {

struct ProbeCommand {
  ProbeOptions options;
  bool help = false;
  bool detect = false;
  std::string json_out;               // "" = stdout only
  std::optional<std::string> peak_for;
};

// Accepts "--name value" and "--name=value" (and "-n"). Errors are
// InvalidArgument with one line naming the option and what was expected:
// unknown options, positional arguments, a missing value, a value that is
// not wholly a number of the option's type. Ranges are validate()'s.
Expected<ProbeCommand> parse_probe_args(const std::vector<std::string>& args);

// The --help text.
std::string probe_usage();

}  // namespace vramsim::gpu
