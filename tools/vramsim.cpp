// vramsim: run a scenario in simulation and check its expectations.
// Exit status: 0 every expectation held, 1 one failed, 2 invalid input
// (scenario or arguments), 3 an output file could not be written, 4 an
// internal error (a bug: please report the scenario).
#include <CLI/CLI.hpp>
#include <iostream>

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
  auto run = add_run_commands(app);
  auto* list = app.add_subcommand("policies", "list the policy models and their variants");
  LiveCommands live_commands(app);
  auto gen = add_gen_command(app);
  auto report = add_report_command(app);
  auto replay = add_replay_command(app);
  auto sweep = add_sweep_command(app);
  auto plan = add_plan_command(app);
  auto calibrate = add_calibrate_command(app);
  auto explain = add_explain_command(app);
  auto imports = add_import_commands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, like every other input error (CLI11's own adds a second).
    std::cerr << "vramsim: " << e.what() << "\n";
    return kExitInvalidInput;
  }

  if (auto code = live_commands.run()) return *code;
  if (auto code = run_import_commands(*imports)) return *code;
  if (gen->sub->parsed()) return run_gen_command(*gen);
  if (report->sub->parsed()) return run_report_command(*report);
  if (replay->sub->parsed()) return run_replay_command(*replay);
  if (sweep->sub->parsed()) return run_sweep_command(*sweep);
  if (plan->sub->parsed()) return run_plan_command(*plan);
  if (calibrate->sub->parsed()) return run_calibrate_command(*calibrate);
  if (explain->sub->parsed()) return run_explain_command(*explain);
  if (list->parsed()) return list_policies();
  return run_run_commands(*run);
}
