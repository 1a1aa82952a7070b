#include "models/worker_sbatch_script.hpp"

#include <sstream>
#include <utility>

namespace vramsim {

std::string render_sbatch_script(const WorkerJobSize& size, const AdvertisementPolicy& policy,
                                 const SbatchOptions& o) {
  std::ostringstream s;
  s << "#!/bin/bash\n";
  s << "#SBATCH --job-name=ray_worker\n";
  s << "#SBATCH --ntasks=1\n";
  s << "#SBATCH --nodes=1\n";
  if (size.gpus > 0 && size.slurm.gpu_type.empty()) s << "#SBATCH --gpus=" << size.gpus << "\n";
  if (size.gpus > 0 && !size.slurm.gpu_type.empty())
    s << "#SBATCH --gres=gpu:" << size.slurm.gpu_type << ":" << size.gpus << "\n";
  s << "#SBATCH --cpus-per-task=" << size.cpus << "\n";
  s << "#SBATCH --mem-per-cpu=" << size.mem_per_cpu_gb << "G\n";
  s << "#SBATCH --time=" << format_slurm_time(size.time_limit) << "\n";
  s << "#SBATCH --chdir=" << o.workspace_dir << "\n";
  s << "#SBATCH --output=" << o.workspace_dir << "/slurm_logs/%x_%j.out\n";
  s << "#SBATCH --error=" << o.workspace_dir << "/slurm_logs/%x_%j.err\n";
  for (const auto& [flag, value] : {std::pair<const char*, const std::string&>{"--partition", size.slurm.partition},
                                    {"--account", size.slurm.account},
                                    {"--qos", size.slurm.qos},
                                    {"--constraint", size.slurm.constraint},
                                    {"--reservation", size.slurm.reservation}})
    if (!value.empty()) s << "#SBATCH " << flag << "=" << value << "\n";
  for (const auto& extra : size.extra_sbatch_args)
    if (!extra.empty()) s << "#SBATCH " << extra << "\n";
  s << "\n";
  s << "if [ -z \"$SLURM_JOB_ID\" ]; then\n";
  s << "  echo \"SLURM_JOB_ID is not set. This script may not be running in a SLURM job.\"\n";
  s << "  exit 1\n";
  s << "fi\n";
  s << "mkdir -p " << o.workspace_dir << "/slurm_logs\n\n";
  s << policy.vram_block(size.gpus);
  const bool vram = !policy.vram_block(size.gpus).empty();
  s << "RESOURCES=\"{\\\"slurm_job_id:${SLURM_JOB_ID}\\\": 1" << (vram ? "${VRAM_RESOURCE}" : "")
    << "}\"\n";
  s << "echo \"Ray resources: ${RESOURCES}\"\n";
  std::string start = o.start_command.empty()
                          ? "vramsim-agent --head " + o.head_address + " --num-cpus " +
                                std::to_string(size.cpus) + " --num-gpus " + std::to_string(size.gpus)
                          : o.start_command;
  s << start << " --resources \"${RESOURCES}\" --block\n";
  return s.str();
}

std::string slurm_option_problem(const std::string& field, const std::string& value) {
  if (value.size() > 128) return field + ": expected at most 128 characters, got " + std::to_string(value.size());
  const std::string extra = field == "constraint" ? "._-+&|,:*()[]!" : "._-+";
  for (char c : value)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          extra.find(c) != std::string::npos))
      return field + ": expected letters, digits and " + extra + " only (it becomes an #SBATCH line), got '" +
             value + "'";
  return "";
}

}  // namespace vramsim
