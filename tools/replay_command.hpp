#pragma once
// The `vramsim replay` subcommand: replays a batch trace (SWF, or a Batsim
// workload when the file name ends in .json) on a
// partition of N processors under FCFS or EASY (backends/sim/batch_replay.hpp) and
// prints how the simulated waits compare with the recorded ones.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>

namespace vramsim {

struct ReplayCommand {
  CLI::App* sub = nullptr;
  std::string trace, scheduler = "fcfs", jobs_csv, estimate = "requested";
  std::int64_t procs = 0;  // 0: the trace's MaxProcs
  std::size_t limit = 0;   // 0: every job
};

// Registers `replay` on `app`; the returned object receives the options.
std::unique_ptr<ReplayCommand> add_replay_command(CLI::App& app);
// Runs it; returns the exit status (0, 2 invalid input, 3 write failed).
int run_replay_command(const ReplayCommand& cmd);

}  // namespace vramsim
