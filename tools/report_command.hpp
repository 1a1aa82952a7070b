#pragma once
// The `vramsim report` subcommand: plots (gnuplot, PNG and SVG) and a
// Markdown summary of a folder of runs (analysis/report.hpp).
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

namespace vramsim {

struct ReportCommand {
  CLI::App* sub = nullptr;
  std::string dir, out;              // out: default DIR/report
  std::vector<std::string> metrics;  // sweep metrics to plot (default: up to 4 that vary)
  std::vector<std::string> slo;      // METRIC=VALUE, drawn as a line
};

std::unique_ptr<ReportCommand> add_report_command(CLI::App& app);
// Returns the exit status: 0, 2 unreadable input, 3 output not written
// (gnuplot missing or failing included).
int run_report_command(ReportCommand& cmd);

}  // namespace vramsim
