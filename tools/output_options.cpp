#include "tools/output_options.hpp"

#include <iostream>

#include "engine/time.hpp"
#include "scenario/scenario.hpp"
#include "tools/option_checks.hpp"

namespace vramsim {
namespace {

std::vector<Duration> parse_times(const std::vector<std::string>& in, const std::string& option) {
  std::vector<Duration> out;
  for (const auto& s : in) {
    auto d = parse_duration(s);
    if (!d || *d > limits::kMaxDuration)
      throw CLI::ValidationError(option, "expected a duration such as 200s or 5m, up to " +
                                             format_duration(limits::kMaxDuration) + ", got '" + s + "'");
    out.push_back(*d);
  }
  return out;
}

// A period option, bounded below so that a run writes at most horizon / 1 s
// rows; nullopt (with the message said) when invalid.
std::optional<Duration> period(const std::string& option, const std::string& text, const char* example) {
  auto d = parse_duration(text);
  if (!d || *d < limits::kMinPeriod || *d > limits::kMaxDuration) {
    std::cerr << "vramsim: " << option << ": expected a duration from " << format_duration(limits::kMinPeriod)
              << " to " << format_duration(limits::kMaxDuration) << " such as " << example << ", got '" << text
              << "'\n";
    return std::nullopt;
  }
  return d;
}

}  // namespace

void add_output_options(CLI::App* cmd, OutputOptions& o) {
  cmd->add_option("--status-at", o.status_at, "print the cluster status at this time (repeatable)");
  cmd->add_option("--status-json", o.status_json,
                  "status snapshots as a JSON array (default with --status-at: status.json)")
      ->check(cli::non_empty("a file path"));
  cmd->add_option("--status-every", o.status_every, "sample the status timeline with this period")
      ->check(cli::non_empty("a duration such as 10s"));
  cmd->add_option("--status-csv", o.status_csv, "timeline CSV file (default status-timeline.csv)")
      ->check(cli::non_empty("a file path"));
  cmd->add_option("--serve-timeline", o.serve_timeline, "serving timeline CSV: requests and replicas per window")
      ->check(cli::non_empty("a file path"));
  cmd->add_option("--serve-window", o.serve_window, "the serving timeline's window (default 60s)")
      ->check(cli::non_empty("a duration such as 60s"));
  cmd->add_option("--frag-csv", o.frag_csv,
                  "one row per deployed app: arrived GPU demand, GPUs allocated, unallocated and fragmented (FGD)")
      ->check(cli::non_empty("a file path"));
  cmd->add_option("--frag-nodes-csv", o.frag_nodes_csv, "with --frag-csv: each GPU node's fragmentation at the end")
      ->check(cli::non_empty("a file path"));
  cmd->add_option("--chrome-trace", o.chrome_trace,
                  "write the run in Chrome Trace Event format (Perfetto) to this file")
      ->check(cli::non_empty("a file path"));
  cmd->add_flag("--critical-path", o.critical_path, "explain each app's time to RUNNING, step by step");
  cmd->add_option("--summary-json", o.summary_json,
                  "write the run's metrics as JSON, by the sweep CSV's column names (docs/python.md)")
      ->check(cli::non_empty("a file path"));
  cmd->add_option("--requests-csv", o.requests_csv,
                  "write every request: app, arrival, start, end, replica, cold, outcome (docs/serving.md)")
      ->check(cli::non_empty("a file path"));
}

bool parse_output_options(const OutputOptions& o, const std::string& command, RunOutputs& out) {
  out.status_at = parse_times(o.status_at, "--status-at");
  if (!o.status_every.empty()) {
    out.status_every = period("--status-every", o.status_every, "10s");
    if (!out.status_every) return false;
  }
  // --status-at writes the JSON beside the printed lines.
  out.status_json_path = o.status_json.empty() && !o.status_at.empty() ? "status.json" : o.status_json;
  if (!o.status_csv.empty()) out.status_csv_path = o.status_csv;
  out.critical_path = o.critical_path;
  out.chrome_trace_path = o.chrome_trace;
  out.serve_timeline_path = o.serve_timeline;
  if (!o.frag_nodes_csv.empty() && o.frag_csv.empty()) {
    std::cerr << "vramsim " << command << ": --frag-nodes-csv needs --frag-csv\n";
    return false;
  }
  out.frag_csv_path = o.frag_csv;
  out.frag_nodes_csv_path = o.frag_nodes_csv;
  out.requests_csv_path = o.requests_csv;
  out.summary_json_path = o.summary_json;
  if (!o.serve_window.empty()) {
    const auto w = period("--serve-window", o.serve_window, "60s");
    if (!w) return false;
    out.serve_window = *w;
  }
  return true;
}

void print_written(const RunOutputs& out, std::ostream& err) {
  if (!out.status_json_path.empty()) err << "status JSON written to " << out.status_json_path << "\n";
  if (out.status_every) err << "status timeline written to " << out.status_csv_path << "\n";
  if (!out.chrome_trace_path.empty()) err << "Chrome trace written to " << out.chrome_trace_path << "\n";
  if (!out.frag_csv_path.empty()) err << "fragmentation per arrival written to " << out.frag_csv_path << "\n";
  if (!out.frag_nodes_csv_path.empty())
    err << "fragmentation per node written to " << out.frag_nodes_csv_path << "\n";
  if (!out.serve_timeline_path.empty()) err << "serving timeline written to " << out.serve_timeline_path << "\n";
  if (!out.summary_json_path.empty()) err << "summary JSON written to " << out.summary_json_path << "\n";
  if (!out.requests_csv_path.empty()) err << "requests written to " << out.requests_csv_path << "\n";
}

}  // namespace vramsim
