#pragma once
// The `vramsim gen` subcommand: its options on the command line and the run
// that writes the generated scenario (scenario/generator.hpp).
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "scenario/generator.hpp"

namespace vramsim {

struct GenCommand {
  CLI::App* sub = nullptr;
  GeneratorOptions opts;
  // Parsed after CLI11 so that a bad value gets the generator's own message.
  std::string replicas = "1,2,4", sizes = "2000,4000,8000,16000,-1", gpus = "A100-SXM4-80GB";
  std::string interval = "2s", first_deploy = "10s", horizon = "48h", shutdown_at = "40h";
  int worker_cpus = 0, worker_gpus = -1;
  std::string out;  // empty or "-": stdout
};

// Registers `gen` on `app`; the returned object receives the options.
std::unique_ptr<GenCommand> add_gen_command(CLI::App& app);
// Writes the scenario; returns the exit status (0, 2 bad knob, 3 write failed).
int run_gen_command(GenCommand& cmd);

}  // namespace vramsim
