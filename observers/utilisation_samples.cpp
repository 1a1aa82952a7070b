#include "observers/utilisation_samples.hpp"

#include <vector>

namespace vramsim {

void UtilisationSamples::start() {
  const Scenario& sc = ctx().scenario;
  for (int i = 0; i < sc.utilisation_samples; ++i) {
    const SimTime t = static_cast<SimTime>((static_cast<double>(i) + 0.5) / sc.utilisation_samples *
                                           static_cast<double>(sc.horizon));
    ctx().exec.at(t, [this] { sampler_.sample(ctx().cluster); });
  }
}

void UtilisationSamples::measure(RunResult& result) {
  // The workload's task mix: every sized app's replica request, by replicas.
  std::vector<TaskShape> tasks;
  for (const auto& [id, app] : ctx().control.apps())
    if (app.sizing.ok() && !app.replica_request.empty())
      tasks.push_back(TaskShape{app.replica_request.get_amount(kCPUId), app.replica_request.get_amount(kGPUId),
                                static_cast<double>(app.spec.replicas)});
  const auto u = sampler_.evaluate(tasks);
  RunMetrics& m = result.metrics;
  m.utilisation_samples = u.samples;
  m.gpu_fragmentation = u.gpu_fragmentation;
  m.gpu_fragmentation_share = u.gpu_fragmentation_share;
  m.gpu_allocation = u.gpu_allocation;
  m.sampled_vram_utilisation = u.vram_utilisation;
}

}  // namespace vramsim
