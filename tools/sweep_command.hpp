#pragma once
// The `vramsim sweep` subcommand: its options on the command line, and the
// run of a scenario grid (runner/sweep.hpp) on this machine's cores into one
// CSV file, with progress on stderr.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

namespace vramsim {

struct SweepCommand {
  CLI::App* sub = nullptr;
  std::string scenario;
  std::vector<std::string> sets;
  std::vector<std::string> gpu_prices;  // --gpu-price MODEL=USD
  std::string seeds;        // empty: the scenario's seed
  std::string out;
  unsigned jobs = 0;        // 0: every core
  std::string slice;        // "I/K": only that slice of the grid
  // --on-slurm: the grid as a SLURM job array of `tasks` tasks writing part
  // files into `parts_dir`, merged into `out` when the array has ended.
  bool on_slurm = false;
  std::size_t tasks = 0;    // 0: min(runs, 16)
  std::string parts_dir;    // default: OUT.parts
  double poll_s = 1;        // squeue period while waiting
  // With --on-slurm: submit only the slices whose part in `parts_dir` is
  // missing or stale (resume), or submit nothing (merge_only).
  bool resume = false;
  bool merge_only = false;
  // With --slice: also write OUT.sum, the part's record (runner/sweep_parts.hpp).
  bool checksums = false;
};

// Registers `sweep` on `app`; the returned object receives the options.
std::unique_ptr<SweepCommand> add_sweep_command(CLI::App& app);
// Runs the sweep; returns the exit status (0 written, 2 bad input, 3 write
// failed or, with --on-slurm, sbatch/squeue failed or a part is missing,
// incomplete or of another build, scenario or grid, 4 internal error, 130
// interrupted).
int run_sweep_command(const SweepCommand& cmd);

}  // namespace vramsim
