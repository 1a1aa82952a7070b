#pragma once
// The `vramsim run` and `vramsim compare` subcommands: one scenario, run
// once or under several policy choices side by side, its expectations
// checked. Exit status: 0 every (required) expectation held, 1 one failed,
// 2 invalid input, 3 an output file could not be written, 4 an internal error.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/trace.hpp"  // Json
#include "tools/output_options.hpp"

namespace vramsim {

struct RunCommand {
  CLI::App* run = nullptr;
  CLI::App* compare = nullptr;
  std::string scenario_path;
  std::uint64_t seed = 0;
  CLI::Option* run_seed = nullptr;
  CLI::Option* compare_seed = nullptr;
  std::vector<std::string> gpu_prices;  // MODEL=USD
  // run
  std::string trace_path, policies;
  OutputOptions outputs;
  // compare
  std::vector<std::string> mixes, required;
};

// Registers `run` and `compare` on `app`; the returned object receives the options.
std::unique_ptr<RunCommand> add_run_commands(CLI::App& app);
// Runs whichever of the two was parsed.
int run_run_commands(const RunCommand& cmd);

// --gpu-price MODEL=USD options (run, sweep, plan) as model -> price;
// nullopt, with "COMMAND: --gpu-price '...': expected ..." said on stderr,
// when one names no model of the partition catalogue or a price outside
// [0, 10000].
std::optional<std::map<std::string, double>> parse_gpu_prices(const std::vector<std::string>& prices,
                                                             const std::string& command);
// The same, written into a scenario document's gpu_prices_usd_per_hour
// (sweep and plan expand their runs from the document).
std::optional<std::map<std::string, double>> put_gpu_prices(const std::vector<std::string>& prices,
                                                           const std::string& command, Json& doc);

}  // namespace vramsim
