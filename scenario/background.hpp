#pragma once
// A scenario's background load: batch jobs from a workload trace (SWF,
// Batsim JSON or an openb pod list) turned into jobs of the simulated
// partition, where they compete with the worker jobs for cores and GPUs
// (docs/capacity-planning.md, docs/scenario-format.md).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenario/cluster_spec.hpp"

namespace vramsim {

struct BackgroundSpec {
  std::string source = "swf";   // swf | batsim | openb (a pod list)
  std::string path;             // resolved against the scenario's folder
  std::size_t limit = 0;        // jobs read from the trace (0: all)
  // Trace second that becomes t = 0 (none: the first job's submit time);
  // jobs submitted earlier are left out.
  std::optional<std::int64_t> from_s;
  // Cores of one trace processor's node (0: the smallest partition node);
  // unused for openb, whose pods take one node each.
  std::int64_t procs_per_node = 0;
};

struct BackgroundLoad {
  std::vector<BackgroundJob> jobs;  // by submit time
  std::size_t read = 0, before_start = 0, no_run_time = 0, too_wide = 0;
  std::size_t too_many_gpus = 0;  // more GPUs per node than any partition node has
  std::size_t skipped() const { return before_start + no_run_time + too_wide + too_many_gpus; }
  std::vector<std::string> warnings;  // the trace's unreadable header lines
};

// Throws WorkloadError (OpenbError for a pod list) on a malformed or
// unreadable trace.
BackgroundLoad load_background(const BackgroundSpec& spec, const std::vector<PartitionNodeType>& partition);

}  // namespace vramsim
