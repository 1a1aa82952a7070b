#pragma once
// The `vramsim calibrate` subcommand: fits the phases of traces to latency
// models and writes the model file a scenario loads (analysis/calibration.hpp).
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

namespace vramsim {

struct CalibrateCommand {
  CLI::App* sub = nullptr;
  std::vector<std::string> traces;
  std::string out;
  std::size_t min_samples = 0;  // set to the default at registration
};

// Registers `calibrate` on `app`; the returned object receives the options.
std::unique_ptr<CalibrateCommand> add_calibrate_command(CLI::App& app);
// Prints the fits, writes the model; returns the exit status (0; 2 a bad
// trace or too few samples; 3 the model could not be written).
int run_calibrate_command(CalibrateCommand& cmd);

}  // namespace vramsim
