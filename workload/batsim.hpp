#pragma once
// Batsim workload files (JSON): `nb_res`, `jobs` ({id, subtime, res,
// walltime, profile, and vramsim's optional gres "gpu:N"}) and `profiles`,
// where a delay profile gives a job's run time. Read into the same job list as an SWF trace (workload/swf.hpp),
// so `vramsim replay` takes either; docs/workloads.md says how the fields
// map. Cost: the whole document is held while it is read.
#include <string>
#include <string_view>

#include "workload/swf.hpp"

namespace vramsim {

// Parses a Batsim workload; `file` names it in errors. Reads at most
// `limit` jobs (0: all). Throws WorkloadError naming the JSON path (for
// example jobs[3].res) and what was expected.
SwfTrace parse_batsim(std::string_view text, const std::string& file, std::size_t limit = 0);
SwfTrace load_batsim(const std::string& path, std::size_t limit = 0);

}  // namespace vramsim
