#pragma once
// The sbatch script of one SLURM worker job, as BioEngine's SlurmWorkers
// writes it (bioengine/cluster/slurm_workers.py; docs/live-slurm.md): the
// #SBATCH directives of its size and site, the SLURM_JOB_ID guard, the
// advertisement policy's VRAM block, and the node's start command (live
// mode: the node agent).
#include <string>

#include "models/advertisement.hpp"
#include "models/worker_defaults.hpp"

namespace vramsim {

struct SbatchOptions {
  std::string workspace_dir = "/tmp/vramsim";
  std::string head_address = "127.0.0.1:6379";
  std::string start_command;  // the node start command; default: the node agent
};

// The whole sbatch script for one worker job, as submitted.
std::string render_sbatch_script(const WorkerJobSize& size, const AdvertisementPolicy& policy,
                                 const SbatchOptions& options);

}  // namespace vramsim
