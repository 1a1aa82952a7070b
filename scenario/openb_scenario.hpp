#pragma once
// Expands a scenario's `"workload": {"source": "openb", ...}` into the
// scenario: one partition node and one warm worker per trace node, one app
// per pod, deployed at its creation time and deleted at its deletion time.
// The mapping is documented in docs/workloads-openb.md.
#include <string>

#include "scenario/scenario.hpp"

namespace vramsim {

// What an import kept, for summaries.
struct OpenbImport {
  std::size_t nodes = 0, gpus = 0, pods = 0;
  std::size_t sharing_pods = 0, multi_gpu_pods = 0, cpu_pods = 0;
  std::size_t pods_with_gpu_spec = 0;  // placed only on the GPU models they name
  std::int64_t share_vram_mb = 0;      // the VRAM a gpu_milli of 1000 stands for
};

// `workload` is the JSON object at `json_path` of `scenario.file`; the
// scenario's cluster section has been parsed. Throws ScenarioError: for a
// bad field with its JSON path, for a bad trace row with the CSV file, line
// and column.
OpenbImport apply_openb_workload(const Json& workload, const std::string& json_path, bool horizon_given,
                                 Scenario& scenario);

}  // namespace vramsim
