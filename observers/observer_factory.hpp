#pragma once
// The observers of one run, built from the scenario and the outputs asked
// for: one factory for a simulated run, a live run and a Python call, so
// each writes every output the others do. To add an output: one observer
// file and one line in make_run_observers (docs/architecture.md).
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "models/policy_set.hpp"
#include "observers/run_observer.hpp"

namespace vramsim {

// What a user asked a run to write or keep (the `run` and `live` options).
struct RunOutputs {
  std::string trace_path;                  // JSON Lines; empty: none
  bool flush_each_event = false;           // each event reaches trace_path at once (live)
  std::ostream* trace_stream = nullptr;    // the trace as JSON Lines here too (the same bytes as trace_path)
  std::vector<Duration> status_at;         // status snapshots at these times
  std::optional<Duration> status_every;    // CSV timeline period
  std::string status_json_path;            // status snapshots (JSON array); empty: none
  std::string status_csv_path = "status-timeline.csv";  // timeline CSV, with status_every
  bool keep_status_snapshots = false;      // the status snapshots in RunResult::status_snapshots
  bool critical_path = false;              // explain each app's time to RUNNING
  std::string chrome_trace_path;           // Chrome Trace Event JSON; empty: none
  std::string serve_timeline_path;         // serving timeline CSV; empty: none
  Duration serve_window = 60 * kSecond;    // its window
  std::string frag_csv_path;               // one row per arrival (FGD's picture); empty: none
  std::string frag_nodes_csv_path;         // per GPU node at the end, with frag_csv_path; empty: none
  bool keep_requests = false;              // every request's path in RunResult::requests
  std::string requests_csv_path;           // those records as CSV; empty: none
  std::string summary_json_path;           // the summary (observers/summary_json.hpp); empty: none
};

// Every observer of a run of `sc` under `policies` with `outputs`, in the
// order the driver calls them: what the trace measures first (usage,
// invariants, jobs, apps), then the end-of-run records (demand left
// pending, the serving outcomes), the samplers, the expectations, the
// outputs, the cost and the summary. Opens every output file now, so that
// an unwritable path fails before the run (OutputError).
RunObservers make_run_observers(const Scenario& sc, const PolicySet& policies, const RunOutputs& outputs);

}  // namespace vramsim
