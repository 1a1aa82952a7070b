#include "scenario/background.hpp"

#include <algorithm>

#include "scenario/scenario.hpp"
#include "workload/batsim.hpp"
#include "workload/openb.hpp"
#include "workload/swf.hpp"

namespace vramsim {

namespace {

// Whether a job of `nodes` nodes, each with `cores` cores and `gpus` GPUs,
// could ever run on the partition; counts it as left out if not.
bool fits_partition(std::int64_t nodes, std::int64_t cores, std::int64_t gpus,
                    const std::vector<PartitionNodeType>& partition, BackgroundLoad& load) {
  std::int64_t hosts = 0, most_gpus = 0;
  for (const auto& t : partition) {
    most_gpus = std::max<std::int64_t>(most_gpus, t.gpus);
    if (t.cpus >= cores && t.gpus >= gpus) hosts += t.count;
  }
  if (gpus > most_gpus) {
    ++load.too_many_gpus;
    return false;
  }
  if (nodes > hosts) {
    ++load.too_wide;
    return false;
  }
  return true;
}

void sort_by_submit(BackgroundLoad& load) {
  std::stable_sort(load.jobs.begin(), load.jobs.end(),
                   [](const BackgroundJob& a, const BackgroundJob& b) { return a.submit < b.submit; });
}

// An openb pod list: each pod is a job of one node from its creation to its
// deletion, with ceil(cpu_milli / 1000) cores and num_gpu whole GPUs (a GPU
// share holds one whole GPU: SLURM has no GPU fractions). The reader bounds
// every time to ten years and cpu_milli to 4096000, so nothing overflows.
BackgroundLoad load_openb_background(const BackgroundSpec& spec, const std::vector<PartitionNodeType>& partition) {
  const std::vector<OpenbPod> pods = load_openb_pods(spec.path, spec.limit);
  BackgroundLoad load;
  load.read = pods.size();
  std::int64_t from = spec.from_s.value_or(0);
  if (!spec.from_s && !pods.empty()) {
    from = pods.front().creation_time;
    for (const OpenbPod& p : pods) from = std::min(from, p.creation_time);
  }
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const OpenbPod& p = pods[i];
    if (p.creation_time < from) {
      ++load.before_start;
      continue;
    }
    const std::int64_t cores = (p.cpu_milli + 999) / 1000;
    if (!fits_partition(1, cores, p.num_gpu, partition, load)) continue;
    BackgroundJob b;
    b.id = static_cast<std::int64_t>(i);  // the pod's row, from 0
    b.submit = (p.creation_time - from) * kSecond;
    b.cpus_per_node = cores;
    b.gpus_per_node = p.num_gpu;
    b.run_time = b.estimate = (p.deletion_time - p.creation_time) * kSecond;
    load.jobs.push_back(b);
  }
  sort_by_submit(load);
  return load;
}

}  // namespace

BackgroundLoad load_background(const BackgroundSpec& spec, const std::vector<PartitionNodeType>& partition) {
  if (spec.source == "openb") return load_openb_background(spec, partition);
  const SwfTrace trace = spec.source == "batsim" ? load_batsim(spec.path, spec.limit) : load_swf(spec.path, spec.limit);
  std::int64_t cpn = spec.procs_per_node;
  if (cpn <= 0) {
    cpn = partition.empty() ? 1 : partition.front().cpus;
    for (const auto& t : partition) cpn = std::min<std::int64_t>(cpn, t.cpus);
  }
  BackgroundLoad load;
  load.warnings = trace.warnings;
  load.read = trace.jobs.size();
  // Trace ticks (seconds in SWF, milliseconds in Batsim) to microseconds.
  const std::int64_t tps = trace.ticks_per_second;
  const Duration tick = kSecond / tps;
  std::int64_t from = spec.from_s.value_or(0) * tps;
  if (!spec.from_s && !trace.jobs.empty()) {
    from = trace.jobs.front().submit;
    for (const SwfJob& j : trace.jobs) from = std::min(from, j.submit);
    from = std::max<std::int64_t>(from, 0);
  }
  for (const SwfJob& j : trace.jobs) {
    // As `vramsim replay`: its processors, its recorded run time, the
    // request as the estimate.
    const std::int64_t procs = replay_procs(j);
    // Trace times become microseconds: bounded first, so nothing overflows.
    for (auto [v, field] : {std::pair{j.submit, "submit"}, {j.run_time, "run_time"}, {j.req_time, "req_time"}})
      if (v > limits::kMaxTraceSeconds * tps)
        throw WorkloadError(trace.file, j.line, field,
                            "expected at most " + std::to_string(limits::kMaxTraceSeconds) + " seconds, got " +
                                (tps == 1 ? std::to_string(v) : std::to_string(static_cast<double>(v) / tps)));
    if (j.submit < from) {
      ++load.before_start;
      continue;
    }
    if (j.run_time < 0 || procs <= 0) {  // a run time of 0 is a job of 0 s
      ++load.no_run_time;
      continue;
    }
    // A job spreads over as few nodes as hold its processors, evenly; its
    // GPUs (SLURM's --gres=gpu:N) are per node.
    const std::int64_t nodes = (procs + cpn - 1) / cpn;
    const std::int64_t per_node = (procs + nodes - 1) / nodes;
    const std::int64_t gpus = std::max<std::int64_t>(j.gpus_per_node, 0);
    if (!fits_partition(nodes, per_node, gpus, partition, load)) continue;
    BackgroundJob b;
    b.id = j.id;
    b.submit = (j.submit - from) * tick;
    b.nodes = nodes;
    b.cpus_per_node = per_node;
    b.gpus_per_node = gpus;
    b.run_time = j.run_time * tick;
    b.estimate = replay_estimate(j) * tick;
    if (const auto limit = replay_time_limit(trace, j)) b.time_limit = *limit * tick;
    load.jobs.push_back(b);
  }
  sort_by_submit(load);
  return load;
}

}  // namespace vramsim
