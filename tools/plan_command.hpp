#pragma once
// The `vramsim plan` subcommand: the cheapest configuration of a grid whose
// SLOs hold across seeds (runner/plan.hpp), run on this machine's cores or
// as SLURM job arrays, one array per round of the search.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

namespace vramsim {

struct PlanCommand {
  CLI::App* sub = nullptr;
  std::string scenario;
  std::vector<std::string> slos, vary, monotone;
  std::vector<std::string> gpu_prices;  // --gpu-price MODEL=USD
  std::string seeds;               // empty: the scenario's seed
  double confidence = 0.95;
  std::string objective = "cost_usd";
  std::string out;                 // empty: no CSV
  unsigned jobs = 0;               // 0: every core
  std::size_t seed_batch = 4;
  bool exhaustive = false;
  bool on_slurm = false;
  std::string parts_dir;           // with --on-slurm; default OUT.parts or plan.parts
  double poll_s = 1;
};

std::unique_ptr<PlanCommand> add_plan_command(CLI::App& app);
// Exit status: 0 a configuration meets the SLOs, 1 none does, 2 bad input,
// 3 a write failed or, with --on-slurm, sbatch/squeue failed or a task left
// no complete part file, 4 internal error, 130 interrupted.
int run_plan_command(const PlanCommand& cmd);

}  // namespace vramsim
