#pragma once
// `vramsim report`: what a folder of runs shows, as data series for plots
// and a Markdown summary. Pure functions over traces, status timelines and
// sweep CSVs; drawing (gnuplot) is the command's business.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

#include "engine/trace.hpp"

namespace vramsim {

// A report input that cannot be read (exit 2): the message names the file,
// the line and what was expected.
class ReportInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One app of one traced run: seconds from its first deploy request to its
// first RUNNING, or none when it never got there.
struct AppTiming {
  std::string app;
  std::optional<double> to_running_s;
};

struct TracedRun {
  std::string file, scenario, policies;  // policies: "legacy", "fixed" or model=variant,...
  std::uint64_t seed = 0;
  std::vector<AppTiming> apps;
};

// `policies` of run_started, shortened to the preset name when every model
// has the same variant.
std::string policy_label(const Json& policies);
TracedRun traced_run(const std::string& file, const std::vector<TraceEvent>& events);

// Booked VRAM of one node over time (a `--status-csv` timeline).
struct NodeSeries {
  std::string node;
  std::vector<std::pair<double, double>> points;  // (time_s, used_vram_mb)
  double peak = 0;
};
std::vector<NodeSeries> read_status_timeline(const std::string& path);  // node order of first appearance

// A sweep CSV: the parameter columns are those before `seed`, the metrics
// the numeric columns after it.
struct SweepTable {
  std::string file;
  std::vector<std::string> params, metrics;
  std::vector<std::map<std::string, std::string>> rows;
};
SweepTable read_sweep_csv(const std::string& path);
// Per value of `param` (in first-seen order), the mean of `metric` over the
// rows where it is a number.
std::vector<std::pair<std::string, double>> sweep_curve(const SweepTable& t, const std::string& param,
                                                        const std::string& metric);

// The same, one curve per combination of the other parameters' values
// (label "p=v,q=w", first-seen order; one unlabelled curve when `param` is
// the only parameter). Points are (value of `param`, mean), values in
// first-seen order over the whole table, a value without a number left out.
struct SweepSeries {
  std::string label;
  std::vector<std::pair<std::string, double>> points;
};
std::vector<SweepSeries> sweep_curves(const SweepTable& t, const std::string& param, const std::string& metric);

// Sorted values and their cumulative share over `total` (apps that never
// reached RUNNING count in `total`, so the curve ends below 1).
std::vector<std::pair<double, double>> ecdf(std::vector<double> values, std::size_t total);
double percentile(std::vector<double> values, double p);  // nearest rank; values non-empty

}  // namespace vramsim
