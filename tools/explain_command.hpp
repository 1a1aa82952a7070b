#pragma once
// The `vramsim explain` subcommand: its options on the command line and the
// run that reads a trace and prints why each app is or is not RUNNING
// (analysis/explain.hpp).
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

namespace vramsim {

struct ExplainCommand {
  CLI::App* sub = nullptr;
  std::string trace, app, format = "text";
  std::string chrome_trace;  // also convert the trace to this Chrome Trace Event file
};

// Registers `explain` on `app`; the returned object receives the options.
std::unique_ptr<ExplainCommand> add_explain_command(CLI::App& app);
// Prints the explanation; returns the exit status (0, 2 bad input, 3 write failed).
int run_explain_command(const ExplainCommand& cmd);

}  // namespace vramsim
