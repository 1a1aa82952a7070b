#pragma once
// The scenario's apps as the FGD paper's task shapes (docs/workloads-openb.md):
// what a fragmentation measure and the fgd placement policy count against.
#include <vector>

#include "models/fragmentation.hpp"
#include "scenario/scenario.hpp"

namespace vramsim {

// One per app, in order, by replicas: an exact GPU request as it is, -1 a
// whole GPU, a VRAM figure as a share of the smallest partition GPU; the
// models of an `accelerator_type:` resource the app asks for (an openb
// pod's gpu_spec).
std::vector<TaskShape> scenario_tasks(const Scenario& sc);
constexpr double kTypicalPopularity = 0.95;  // the FGD paper's popularity threshold

}  // namespace vramsim
