#pragma once
// Shapes shared by several models: the SLURM worker defaults and a worker
// job's size.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/resources.hpp"
#include "engine/time.hpp"

namespace vramsim {

// Where, and on whose account, a worker job runs on a real cluster: lines of
// the sbatch script. The simulated partition ignores them.
struct SlurmJobOptions {
  std::string partition, account, qos, constraint, reservation;
  std::string gpu_type;  // "": --gpus=N; else --gres=gpu:TYPE:N
};

// What is wrong with a SlurmJobOptions value for an #SBATCH line, or "":
// names and types are letters, digits and . _ - + (at most 128); a
// constraint may also hold SLURM's & | , : * ( ) [ ] ! and no blank.
std::string slurm_option_problem(const std::string& field, const std::string& value);

struct WorkerDefaults {
  int cpus = 8;
  int gpus = 1;
  int mem_per_cpu_gb = 16;
  Duration time_limit = 4 * kHour;
  std::vector<std::string> extra_sbatch_args;
  SlurmJobOptions slurm;
};

struct WorkerJobSize {
  int gpus = 0;
  int cpus = 1;
  int mem_per_cpu_gb = 1;
  Duration time_limit = 4 * kHour;
  std::vector<std::string> extra_sbatch_args;
  SlurmJobOptions slurm;
};

}  // namespace vramsim
