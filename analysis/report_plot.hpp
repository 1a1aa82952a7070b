#pragma once
// What the report's pictures share: figures as the tables print them,
// gnuplot quoting, a PNG and an SVG from one script, and axis labels with
// the metric's unit.
#include <fstream>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vramsim::report_plot {

// A finite number, the whole text; nullopt otherwise (empty, "inf", "never").
std::optional<double> number(const std::string& s);
// A sweep or plan cell as a metric: a finite number, +infinity for "inf"
// (a request that never completed: "never"), nullopt otherwise (empty: not
// measured).
std::optional<double> metric_value(const std::string& s);
// A figure, or "never" for +infinity.
std::string figure_or_never(double v);
// Opens `path` or throws ReportInputError naming it.
std::ifstream open_input(const std::string& path);
std::string fixed(double v, int digits = 1);
// A figure for a table: three significant digits at least, no trailing
// zeros beyond them.
std::string figure(double v);
// A number as short as it reads: 3600, 120, 0.5 (six significant digits).
std::string compact(double v);
// Integer y ticks for a count from 0 to `top`: a step of 1, 2 or 5 x 10^n,
// at most ten ticks; the gnuplot lines.
std::string integer_ytics(double top);
// Y ticks up to `hi` and a "never" tick at `never_y` above it, so no number
// tick prints over it: linear from `lo` at a step of 1, 2 or 5 x 10^n (six
// or so ticks), or a log axis's decades from `lo`.
std::string never_ytics(double lo, double hi, bool log, double never_y);
// A string inside a double-quoted gnuplot string.
std::string gp_quote(const std::string& s);
// A file-name-safe stem.
std::string stem_of(const std::string& s);
// The same plot as PNG and SVG: `body` is everything after the terminal.
std::string plot_script(const std::string& name, const std::string& body);
std::string yrange_line(std::pair<double, double> r);
// A CSV record with as many fields as its header, or a ReportInputError
// naming the file, the line and both counts.
void check_width(const std::vector<std::string>& cells, std::size_t columns, const std::string& path, std::size_t line);
// A run metric with its unit, read from its name: "req_latency_p99_s (s)",
// "cost_usd (USD)", "req_slo_attainment (share)".
std::string metric_label(const std::string& metric);

}  // namespace vramsim::report_plot

namespace vramsim {
struct PlanTable;
struct ReportFiles;
struct FragSeries;
// The report's section on one plan: its table, and per SLO the cost
// frontier with the SLO line and the chosen configuration.
void plan_section(const PlanTable& t, ReportFiles& out, std::ostream& md);
// The fragmentation section (the FGD paper's figures): unallocated and
// fragmented GPUs against the arrived workload, one curve per series.
void frag_section(const std::vector<FragSeries>& series, ReportFiles& out, std::ostream& md);
}  // namespace vramsim
