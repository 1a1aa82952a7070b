#include "scenario/task_shapes.hpp"

#include <algorithm>

namespace vramsim {

std::vector<TaskShape> scenario_tasks(const Scenario& sc) {
  std::int64_t min_vram = 0;
  for (const auto& t : sc.slurm.nodes)
    if (t.gpus > 0 && t.gpu_memory_mb > 0) min_vram = min_vram ? std::min(min_vram, t.gpu_memory_mb) : t.gpu_memory_mb;
  std::vector<TaskShape> tasks;
  for (const auto& a : sc.apps) {
    Amount gpus = 0;
    if (a.disable_gpu) gpus = 0;
    else if (a.num_gpus) gpus = to_amount(*a.num_gpus);
    else if (!a.gpu_memory_mb || *a.gpu_memory_mb == 0) gpus = 0;
    else if (a.gpu_milli) gpus = *a.gpu_milli * (kAmountScale / 1000);
    else if (*a.gpu_memory_mb < 0) gpus = kAmountScale;
    else if (min_vram > 0)
      gpus = std::min(kAmountScale, to_amount(static_cast<double>(*a.gpu_memory_mb) / static_cast<double>(min_vram)));
    // The app's accelerator constraint (an openb pod's gpu_spec; a pod has
    // at most one) names the GPU models the task may run on.
    std::vector<std::string> models;
    for (const auto& r : a.resources)
      if (models.empty()) models = accelerator_models(r.first);
    tasks.push_back(TaskShape{to_amount(a.cpus), gpus, static_cast<double>(std::max(1, a.replicas)), std::move(models)});
  }
  return tasks;
}

}  // namespace vramsim
