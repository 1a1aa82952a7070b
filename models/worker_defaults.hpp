#pragma once
// Shapes shared by several models: the SLURM worker defaults and a worker
// job's size.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/resources.hpp"
#include "engine/time.hpp"

namespace vramsim {

struct WorkerDefaults {
  int cpus = 8;
  int gpus = 1;
  int mem_per_cpu_gb = 16;
  Duration time_limit = 4 * kHour;
  std::vector<std::string> extra_sbatch_args;
};

struct WorkerJobSize {
  int gpus = 0;
  int cpus = 1;
  int mem_per_cpu_gb = 1;
  Duration time_limit = 4 * kHour;
  std::vector<std::string> extra_sbatch_args;
};

}  // namespace vramsim
