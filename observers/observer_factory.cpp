#include "observers/observer_factory.hpp"

#include "models/placement.hpp"
#include "observers/app_outcomes.hpp"
#include "observers/chrome_trace_output.hpp"
#include "observers/cost.hpp"
#include "observers/critical_paths.hpp"
#include "observers/expectations.hpp"
#include "observers/fragmentation_csv.hpp"
#include "observers/invariants.hpp"
#include "observers/job_accounting.hpp"
#include "observers/requests_csv.hpp"
#include "observers/serve_timeline.hpp"
#include "observers/serving_outcomes.hpp"
#include "observers/status_snapshots.hpp"
#include "observers/status_timeline.hpp"
#include "observers/summary_json.hpp"
#include "observers/trace_file.hpp"
#include "observers/unplaced_demands.hpp"
#include "observers/usage_integrals.hpp"
#include "observers/utilisation_samples.hpp"
#include "scenario/task_shapes.hpp"

namespace vramsim {

RunObservers make_run_observers(const Scenario& sc, const PolicySet& policies, const RunOutputs& out) {
  RunObservers list;
  auto add = [&list](auto observer) {
    auto* raw = observer.get();
    list.push_back(std::move(observer));
    return raw;
  };
  // What the trace measures, as it comes.
  add(std::make_unique<UsageIntegrals>());
  const Invariants* invariants = add(std::make_unique<Invariants>(sc));
  add(std::make_unique<JobAccounting>());
  add(std::make_unique<AppOutcomes>());
  // The records of the run's end, in this order before run_ended.
  add(std::make_unique<UnplacedDemands>());
  add(std::make_unique<ServingOutcomes>());
  // Samples of the cluster and its status.
  if (sc.utilisation_samples > 0) add(std::make_unique<UtilisationSamples>());
  StatusSnapshots* status =
      add(std::make_unique<StatusSnapshots>(out.status_at, out.status_json_path, out.keep_status_snapshots));
  add(std::make_unique<Expectations>(sc, *invariants, *status));
  if (out.status_every) add(std::make_unique<StatusTimeline>(*out.status_every, out.status_csv_path));
  if (!out.serve_timeline_path.empty())
    add(std::make_unique<ServeTimeline>(out.serve_timeline_path, out.serve_window));
  if (!out.frag_csv_path.empty()) {
    const std::vector<TaskShape> tasks = scenario_tasks(sc);
    const auto placement = policies.names.find(PlacementPolicy::kModel);
    add(std::make_unique<FragmentationCsv>(sc, out.frag_csv_path, out.frag_nodes_csv_path,
                                           placement == policies.names.end() ? "ray" : placement->second, tasks,
                                           typical_tasks(tasks, kTypicalPopularity)));
  }
  // The trace and what is built from it.
  if (!out.trace_path.empty()) add(std::make_unique<TraceFile>(out.trace_path, out.flush_each_event));
  if (out.trace_stream) add(std::make_unique<TraceFile>(*out.trace_stream));
  if (!out.chrome_trace_path.empty()) add(std::make_unique<ChromeTraceOutput>(out.chrome_trace_path));
  if (out.critical_path) add(std::make_unique<CriticalPaths>());
  if (out.keep_requests || !out.requests_csv_path.empty())
    add(std::make_unique<RequestsCsv>(out.requests_csv_path));
  // From the figures of the others.
  add(std::make_unique<Cost>());
  if (!out.summary_json_path.empty()) add(std::make_unique<SummaryJson>(out.summary_json_path));
  return list;
}

}  // namespace vramsim
