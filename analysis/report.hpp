#pragma once
// `vramsim report`: what a folder of runs shows, as data series for plots,
// gnuplot scripts and a Markdown summary. Pure functions over traces, status
// timelines and sweep CSVs: build_report returns every file's text, and the
// command writes them and runs gnuplot, so what is drawn can be tested
// without drawing it.
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/csv.hpp"
#include "engine/trace.hpp"

namespace vramsim {

// A report input that cannot be read (exit 2): the message names the file,
// the line and what was expected.
using ReportInputError = InputFileError;

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
  double offered = 0;  // the largest total_vram_mb: 0 where the node never advertised VRAM_MB
  bool tracked() const { return offered > 0; }
};
std::vector<NodeSeries> read_status_timeline(const std::string& path);  // node order of first appearance

// A serving timeline (`vramsim run --serve-timeline`): per app, one point
// per window.
struct ServePoint {
  double t = 0;                          // the window's end, s (`time_s`)
  double arrival_rate = 0;               // requests per second over the window
  std::optional<double> p50, p95, p99;   // latency of the window's completed requests, s
  double replicas = 0, ongoing = 0;      // at the window's end
  double never = 0;                      // refused or timed out in the window
};
struct ServeSeries {
  std::string app;
  std::vector<ServePoint> points;
  double window_s = 0;                   // each window is [t - window_s, t]
  std::optional<double> slo_latency_s;   // the app's slo_latency_s, where the timeline gives one
};
std::vector<ServeSeries> read_serve_timeline(const std::string& path);  // app order of first appearance

// A sweep CSV: the parameter columns are those before `seed`, the metrics
// the columns after it that hold a number in some row.
struct SweepTable {
  std::string file;
  std::vector<std::string> params, metrics;
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<std::string> columns;  // every column after `seed`, in header order
};
SweepTable read_sweep_csv(const std::string& path);
// A plan CSV (`vramsim plan -o`): the parameter columns before `seeds_run`,
// then per SLO its metric's mean, bound and condition, `slo_met`, the
// objective, `chosen` and `evaluated_as`.
struct PlanSlo {
  std::string metric, condition;  // condition: "<=10", "<10", ">=0.99", ">0.99"
  double value = 0;
  bool upper = true;              // the metric must stay at or below the value
};
struct PlanTable {
  struct Row {
    std::vector<std::string> values;  // per parameter
    std::size_t seeds_run = 0;
    std::string decision;             // all_seeds, certain_fail, pruned
    std::vector<double> mean, bound;  // per SLO; +inf where a request never completed
    std::optional<bool> met;          // empty when pruned
    double objective = 0;
    bool chosen = false;
  };
  std::string file, objective;
  std::vector<std::string> params;
  std::vector<PlanSlo> slos;
  std::vector<Row> rows;
};
PlanTable read_plan_csv(const std::string& path);  // throws ReportInputError
PlanTable read_plan_csv(std::istream& in, const std::string& path);  // `path` names it in messages
// The cost frontier of SLO `k`: the rows run with every seed that no cheaper
// (or equally cheap, earlier) row beats on the SLO's bound, cheapest first.
std::vector<std::size_t> plan_frontier(const PlanTable& t, std::size_t k);

// A fragmentation CSV (`vramsim run --frag-csv`): one point per arrival.
struct FragPoint {
  double arrived_share = 0;  // GPU demand arrived so far / the cluster's GPUs
  double arrived = 0;        // GPU demand arrived so far, GPUs
  double gpus = 0, allocated = 0, unallocated = 0, fragmented = 0;  // GPUs
};
struct FragSeries {
  std::string file, label;  // label: the placement column, else the file's stem
  std::vector<FragPoint> points;
};
FragSeries read_frag_csv(const std::string& path);  // throws ReportInputError
FragSeries read_frag_csv(std::istream& in, const std::string& path);  // `path` names it in messages
// The last point at or below an arrived share; nullopt before the first.
std::optional<FragPoint> frag_at(const FragSeries& s, double arrived_share);
// The arrived share at the first arrival whose demand found no room (GPUs
// allocated fall short of the demand arrived by more than 0.001 GPU).
std::optional<double> frag_first_shortfall(const FragSeries& s);

// Per value of `param` (in first-seen order), the mean of `metric` over the
// rows where it is a number.
std::vector<std::pair<std::string, double>> sweep_curve(const SweepTable& t, const std::string& param,
                                                        const std::string& metric);

// The spread of a metric over seeds: mean, the 95 % confidence interval of
// the mean (Student's t), and the 5th, 50th and 95th nearest-rank
// percentiles of the values themselves.
struct Spread {
  std::size_t n = 0;
  double mean = 0, ci = 0;  // ci: half-width, 0 for fewer than 2 values
  double p5 = 0, p50 = 0, p95 = 0, min = 0, max = 0;
};
Spread spread_of(const std::vector<double>& values);  // values non-empty

// The same, one curve per combination of the other parameters' values
// (label "p=v,q=w", first-seen order; one unlabelled curve when `param` is
// the only parameter). Points are (value of `param`, mean), values in
// first-seen order over the whole table, a value without a number left out;
// `spread` holds each point's spread over its rows.
struct SweepSeries {
  std::string label;
  std::vector<std::pair<std::string, double>> points;
  std::vector<Spread> spread;
};
std::vector<SweepSeries> sweep_curves(const SweepTable& t, const std::string& param, const std::string& metric);

// Whether every value is a number (then the parameter is drawn on a
// numeric axis, else as categories).
bool all_numbers(const std::vector<std::string>& values);

// Sorted values and their cumulative share over `total` (apps that never
// reached RUNNING count in `total`, so the curve ends below 1).
std::vector<std::pair<double, double>> ecdf(std::vector<double> values, std::size_t total);

// A time axis: the unit that fits a span of seconds (s below 10 min, min
// below 3 h, else h) and seconds per unit.
struct TimeUnit {
  std::string name;  // "s", "min", "h"
  double seconds = 1;
};
TimeUnit time_unit(double span_s);
// A y range from 0 (or below, for negative values) to the highest value
// with 10 % headroom, so no line lies on the frame; [0, 1] for all zeros.
std::pair<double, double> y_range(double lo, double hi);
// The gnuplot line style of series k: ten distinct colours, then the same
// colours dashed (dash type 2, 3, ...), so no two series look alike.
std::string series_style(std::size_t k);

// A service-level objective line: "METRIC=VALUE" (--slo).
std::pair<std::string, double> parse_slo(const std::string& text);  // throws ReportInputError

struct ReportInputs {
  std::string title;  // the folder's name
  std::vector<TracedRun> runs;
  std::vector<std::pair<std::string, std::vector<NodeSeries>>> timelines;  // (file stem, series)
  std::vector<std::pair<std::string, std::vector<ServeSeries>>> serving;   // (file stem, series)
  std::vector<SweepTable> sweeps;
  std::vector<PlanTable> plans;
  std::vector<FragSeries> fragmentation;  // drawn together, one curve each
};
struct ReportOptions {
  std::vector<std::string> metrics;     // sweep metrics to plot (default: up to 4 that vary)
  std::map<std::string, double> slo;    // metric -> objective, drawn as a line
};
struct ReportFiles {
  std::vector<std::pair<std::string, std::string>> files;  // (name, text): data files and gnuplot scripts
  std::vector<std::string> scripts;                        // plot names: NAME.gp draws NAME.png and NAME.svg
  std::string markdown;                                    // report.md
};
// Throws ReportInputError for a --metric that is no numeric column of a sweep.
ReportFiles build_report(const ReportInputs& in, const ReportOptions& opt);

}  // namespace vramsim
