#pragma once
// One run of a scenario in simulation: the world (event loop, cluster state,
// simulated SLURM partition, control plane with the chosen policies), the
// observers asked for (observers/observer_factory.hpp) and the simulated
// partition's own account of its jobs, driven to the horizon by the
// scenario driver.
#include <optional>
#include <string>

#include "observers/observer_factory.hpp"
#include "observers/run_report.hpp"
#include "observers/run_result.hpp"
#include "scenario/scenario.hpp"

namespace vramsim {

struct RunOptions {
  std::optional<std::uint64_t> seed;    // overrides the scenario's
  std::optional<std::string> policies;  // overrides the scenario's
  RunOutputs outputs;                   // what to write and keep
};

RunResult run_scenario(const Scenario& scenario, const RunOptions& options);

}  // namespace vramsim
