#pragma once
// The report's builder, shared by its sections (report.cpp: runs, status
// and serving timelines; report_sweep.cpp: sweeps): the files it collects
// and the Markdown it writes. Internal to analysis/.
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/report.hpp"
#include "analysis/report_plot.hpp"

namespace vramsim::report_detail {

// A metric's y axis on the sweep plots: linear from 0 (or below), or log
// where its positive values span more than two decades; with a "never" level
// above the highest number where some row never answered.
struct SweepAxis {
  double lo = 0, hi = 1;
  bool log = false;
  std::optional<double> never;
  double highest = 0;  // the highest number (not never)
  std::string lines() const {
    std::string out = log ? "set logscale y\n" : "";
    out += "set yrange [" + report_plot::fixed(lo, 6) + ":" + report_plot::fixed(hi, 6) + "]\n";
    if (never) out += report_plot::never_ytics(log ? lo : std::min(0.0, lo), highest, log, *never);
    return out;
  }
  double clamp(double v) const { return never && v > *never ? *never : v; }
};

// The y axis of one metric's sweep plots, from its finite values and
// whether some row never answered.
SweepAxis sweep_axis(const std::vector<double>& finite, bool never);

struct ReportBuilder {
  const ReportOptions& opt;
  ReportFiles out;
  std::ostringstream md;

  void file(const std::string& name, const std::string& text) { out.files.emplace_back(name, text); }
  void plot(const std::string& name, const std::string& body) {
    file(name + ".gp", report_plot::plot_script(name, body));
    out.scripts.push_back(name);
  }
  std::optional<double> slo(const std::string& metric) const {
    auto it = opt.slo.find(metric);
    return it == opt.slo.end() ? std::nullopt : std::optional<double>(it->second);
  }

  void runs(const std::vector<TracedRun>& runs);
  void timelines(const std::vector<std::pair<std::string, std::vector<NodeSeries>>>& timelines);
  void serving(const std::string& name, const std::vector<ServeSeries>& series);
  void sweep(const SweepTable& t);
  void sweep_by_param(const SweepTable& t, const std::string& name, const std::string& param, const std::string& metric,
                      const SweepAxis& axis);
  // sweep_by_param's steps: the table with what it shows (returns the
  // values no series has a number for), then the plot.
  std::vector<std::string> sweep_param_table(const std::vector<SweepSeries>& series, const std::vector<std::string>& values,
                                             const std::string& param, const std::string& metric);
  void sweep_param_plot(const std::vector<SweepSeries>& series, const std::vector<std::string>& values, bool numeric,
                        const std::vector<std::string>& empty_values, const std::string& plot_name,
                        const std::string& param, const std::string& metric, const SweepAxis& axis);
  // sweep's steps: what each metric column holds, the summary list, and the
  // table of a sweep over seeds alone.
  struct MetricColumns {
    std::vector<std::string> varying, constant, partly_empty, never;
    std::map<std::string, std::string> empty_where;  // metric -> where it is empty
    std::map<std::string, std::size_t> never_rows;   // metric -> rows where it is "inf" (never)
  };
  // The metrics drawn without --metric, and what the sweep was taken to be about.
  static std::pair<std::vector<std::string>, std::string> default_metrics(const SweepTable& t, const MetricColumns& c);
  static MetricColumns metric_columns(const SweepTable& t);
  void sweep_summary(const SweepTable& t, const std::string& name, const MetricColumns& c,
                     const std::vector<std::string>& metrics);
  void sweep_seed_table(const SweepTable& t, const std::vector<std::string>& metrics);
  void sweep_seeds_only(const SweepTable& t, const std::string& name, const std::string& metric);
};

}  // namespace vramsim::report_detail
