// vramsim: run a scenario in simulation and check its expectations.
// Exit status: 0 every expectation held, 1 one failed, 2 invalid input
// (scenario or arguments), 3 an output file could not be written, 4 an
// internal error (a bug: please report the scenario).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <initializer_list>
#include <iostream>
#include <iterator>
#include <optional>
#include <string_view>

#include "models/registry.hpp"
#include "tools/calibrate_command.hpp"
#include "tools/explain_command.hpp"
#include "tools/gen_command.hpp"
#include "tools/import_command.hpp"
#include "tools/live_commands.hpp"
#include "tools/plan_command.hpp"
#include "tools/replay_command.hpp"
#include "tools/report_command.hpp"
#include "tools/run_command.hpp"
#include "tools/sweep_command.hpp"

using namespace vramsim;

namespace {

constexpr int kExitInvalidInput = 2;

int list_policies() {
  auto& reg = PolicyRegistry::instance();
  for (const auto& m : reg.models()) {
    std::cout << m << ":";
    for (const auto& v : reg.variants(m)) std::cout << " " << v;
    std::cout << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"vramsim: a discrete-event simulator of a SLURM-backed, VRAM-packed GPU serving cluster"};
  app.require_subcommand(1);
  // Every command is added to the parser only when the first argument names
  // it, or names none of them (then all are, for the help and the error):
  // building the parser for every command cost a short run a millisecond.
  static constexpr std::string_view kCommands[] = {"run",  "compare", "policies", "live",   "status",
                                                   "diff", "gen",     "report",   "replay", "sweep",
                                                   "plan", "calibrate", "explain", "import", "export"};
  const std::string_view first = argc > 1 ? argv[1] : "";
  const bool named = std::find(std::begin(kCommands), std::end(kCommands), first) != std::end(kCommands);
  auto wants = [&](std::initializer_list<std::string_view> names) {
    return !named || std::find(names.begin(), names.end(), first) != names.end();
  };
  auto run = wants({"run", "compare"}) ? add_run_commands(app) : nullptr;
  CLI::App* list = wants({"policies"}) ? app.add_subcommand("policies", "list the policy models and their variants")
                                       : nullptr;
  std::optional<LiveCommands> live_commands;
  if (wants({"live", "status", "diff"})) live_commands.emplace(app);
  auto gen = wants({"gen"}) ? add_gen_command(app) : nullptr;
  auto report = wants({"report"}) ? add_report_command(app) : nullptr;
  auto replay = wants({"replay"}) ? add_replay_command(app) : nullptr;
  auto sweep = wants({"sweep"}) ? add_sweep_command(app) : nullptr;
  auto plan = wants({"plan"}) ? add_plan_command(app) : nullptr;
  auto calibrate = wants({"calibrate"}) ? add_calibrate_command(app) : nullptr;
  auto explain = wants({"explain"}) ? add_explain_command(app) : nullptr;
  auto imports = wants({"import", "export"}) ? add_import_commands(app) : nullptr;

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, like every other input error (CLI11's own adds a second).
    std::cerr << "vramsim: " << e.what() << "\n";
    return kExitInvalidInput;
  }

  if (live_commands)
    if (auto code = live_commands->run()) return *code;
  if (imports)
    if (auto code = run_import_commands(*imports)) return *code;
  if (gen && gen->sub->parsed()) return run_gen_command(*gen);
  if (report && report->sub->parsed()) return run_report_command(*report);
  if (replay && replay->sub->parsed()) return run_replay_command(*replay);
  if (sweep && sweep->sub->parsed()) return run_sweep_command(*sweep);
  if (plan && plan->sub->parsed()) return run_plan_command(*plan);
  if (calibrate && calibrate->sub->parsed()) return run_calibrate_command(*calibrate);
  if (explain && explain->sub->parsed()) return run_explain_command(*explain);
  if (list && list->parsed()) return list_policies();
  return run_run_commands(*run);
}
