// The report's sweep sections: per metric and parameter, the curve of the
// mean with its spread over seeds, the table of what each curve shows, and
// a sweep over seeds alone.
#include "analysis/report.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/report_builder.hpp"
#include "analysis/report_plot.hpp"
#include "engine/stats.hpp"

namespace vramsim {
namespace report_detail {

using namespace report_plot;

constexpr std::size_t kMaxSweepCurves = 8;
constexpr std::size_t kDefaultMetrics = 4;

// Student's t at 97.5 % for `df` degrees of freedom (1.96 beyond 30).
double t975(std::size_t df) {
  static const double t[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                             2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                             2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  return df == 0 ? 0 : df <= 30 ? t[df - 1] : 1.96;
}

SweepAxis sweep_axis(const std::vector<double>& finite, bool never) {
  SweepAxis a;
  double lo = 0, hi = 0;
  for (double v : finite) lo = std::min(lo, v), hi = std::max(hi, v);
  double least_positive = 0;
  for (double v : finite)
    if (v > 0 && (least_positive == 0 || v < least_positive)) least_positive = v;
  const bool positive = !finite.empty() && std::all_of(finite.begin(), finite.end(), [](double v) { return v > 0; });
  a.highest = hi;
  if (positive && hi / least_positive > 100) {
    a.log = true;
    a.lo = least_positive / 2;
    a.hi = hi * 2;
    if (never) {
      a.never = hi * 4;
      a.hi = hi * 8;
    }
    return a;
  }
  std::tie(a.lo, a.hi) = y_range(lo, hi);
  if (never) {
    const double span = (hi > 0 ? hi : 1) - std::min(0.0, lo);
    a.never = std::max(hi, 0.0) + 0.15 * span;
    a.hi = std::max(hi, 0.0) + 0.25 * span;
  }
  return a;
}

std::string spread_cell(const Spread& s) {
  return figure_or_never(s.mean) + " [" + figure_or_never(s.p5) + ", " + figure_or_never(s.p95) + "]";
}

std::vector<std::string> param_values(const SweepTable& t, const std::string& param, bool numeric) {
  std::vector<std::string> values;
  for (const auto& r : t.rows)
    if (std::find(values.begin(), values.end(), r.at(param)) == values.end()) values.push_back(r.at(param));
  if (numeric)
    std::stable_sort(values.begin(), values.end(),
                     [](const std::string& a, const std::string& b) { return *number(a) < *number(b); });
  return values;
}

void ReportBuilder::sweep_by_param(const SweepTable& t, const std::string& name, const std::string& param,
                             const std::string& metric, const SweepAxis& axis) {
  const bool numeric = all_numbers(param_values(t, param, false));
  const auto values = param_values(t, param, numeric);
  if (values.size() < 2) {
    md << "`" << param << "` takes one value (" << values.front() << "): no plot by it.\n\n";
    return;
  }
  auto series = sweep_curves(t, param, metric);
  if (series.size() > kMaxSweepCurves) {
    // More curves than this read as noise: one over all the runs instead.
    SweepTable all = t;
    all.params = {param};
    series = sweep_curves(all, param, metric);
    series[0].label = "all runs";
  }
  const std::string plot_name = "sweep-" + stem_of(name) + "-" + stem_of(param) + "-" + stem_of(metric);
  const auto empty_values = sweep_param_table(series, values, param, metric);
  sweep_param_plot(series, values, numeric, empty_values, plot_name, param, metric, axis);
  md << "![" << metric << " by " << param << "](" << plot_name << ".png)\n\n";
}

std::vector<std::string> ReportBuilder::sweep_param_table(const std::vector<SweepSeries>& series,
                                                    const std::vector<std::string>& values, const std::string& param,
                                                    const std::string& metric) {
  md << "### " << metric << " by " << param << "\n\nmean [p5, p95] over seeds\n\n| " << param;
  for (const auto& c : series) md << " | " << (c.label.empty() ? metric : c.label);
  md << " |\n|---";
  for (std::size_t i = 0; i < series.size(); ++i) md << "|---";
  md << "|\n";
  for (const auto& v : values) {
    md << "| " << v;
    for (const auto& c : series) {
      auto it = std::find_if(c.points.begin(), c.points.end(), [&](const auto& pt) { return pt.first == v; });
      md << " | " << (it == c.points.end() ? std::string("empty") : spread_cell(c.spread[static_cast<std::size_t>(it - c.points.begin())]));
    }
    md << " |\n";
  }
  // How much the parameter moves the metric: the largest change within one
  // series (the other parameters held), so a difference between series is
  // not read as the parameter's effect.
  std::optional<double> change;  // share of the series' largest mean
  double lo = 0, hi = 0;
  for (const auto& c : series) {
    std::vector<double> means;  // the finite ones: a mean that is never has no size
    for (const auto& pt : c.points)
      if (!std::isinf(pt.second)) means.push_back(pt.second);
    if (means.size() < 2) continue;
    const double a = *std::min_element(means.begin(), means.end()), b = *std::max_element(means.begin(), means.end());
    if (b <= 0 || a < 0) continue;
    if (!change || (b - a) / b > *change) change = (b - a) / b, lo = a, hi = b;
  }
  md << "\n";
  if (change)
    md << "Over `" << param << "` the mean changes by at most " << fixed(*change * 100, 1) << " % of its largest value"
       << (series.size() > 1 ? " within a series" : "") << " (from " << figure(lo) << " to " << figure(hi) << ").";
  std::vector<std::string> empty_values;
  for (const auto& v : values) {
    bool has = false;
    for (const auto& c : series)
      for (const auto& pt : c.points) has = has || pt.first == v;
    if (!has) empty_values.push_back(v);
  }
  if (!empty_values.empty()) {
    md << " Empty in every row, so not drawn, for " << param << " = ";
    for (std::size_t i = 0; i < empty_values.size(); ++i) md << (i ? ", " : "") << empty_values[i];
    md << ".";
  }
  md << "\n\n";
  return empty_values;
}

void ReportBuilder::sweep_param_plot(const std::vector<SweepSeries>& series, const std::vector<std::string>& values,
                               bool numeric, const std::vector<std::string>& empty_values, const std::string& plot_name,
                               const std::string& param, const std::string& metric, const SweepAxis& axis) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < values.size(); ++i) index[values[i]] = i;
  // Categories: each series shifted a little, so their bars do not overlap.
  const double width = series.size() > 1 ? 0.3 / static_cast<double>(series.size() - 1) : 0;
  std::string body;
  bool any_never = false;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const std::string dat = plot_name + "-" + std::to_string(k) + ".dat";
    std::string nevers;
    std::string rows = numeric ? "# " + param + " mean p5 p95 runs\n" : "# position mean p5 p95 runs value\n";
    for (const auto& value : values) {  // numbers in numeric order
      const auto& pts = series[k].points;
      const auto at = std::find_if(pts.begin(), pts.end(), [&](const auto& pt) { return pt.first == value; });
      if (at == pts.end()) continue;
      const double mean = at->second;
      const Spread& s = series[k].spread[static_cast<std::size_t>(at - pts.begin())];
      const std::string x = numeric ? value
                                    : fixed(static_cast<double>(index.at(value)) - 0.15 * (series.size() > 1) +
                                                width * static_cast<double>(k), 3);
      // A mean that is never (a row never answered) lies on the "never"
      // level, and so does a bar's end.
      rows += x + " " + fixed(axis.clamp(mean), 6) + " " + fixed(axis.clamp(s.p5), 6) + " " +
              fixed(axis.clamp(s.p95), 6) + " " + std::to_string(s.n) + (numeric ? "" : " " + gp_quote(value)) + "\n";
      if (std::isinf(mean)) nevers += x + " " + fixed(*axis.never, 6) + "\n";
    }
    file(dat, rows);
    const std::string title = series[k].label.empty() ? metric : series[k].label;
    body += std::string(k ? ", " : "plot ") + gp_quote(dat) +
            (numeric ? " using 1:2:3:4 with yerrorlines lw 2 pt 7 " : " using 1:2:3:4 with yerrorbars lw 2 pt 7 ps 1.5 ") +
            series_style(k) + " title " + gp_quote(title);
    if (!nevers.empty()) {
      const std::string never_dat = plot_name + "-" + std::to_string(k) + "-never.dat";
      file(never_dat, "# " + std::string(numeric ? param : "position") + " never_level\n" + nevers);
      body += ", " + gp_quote(never_dat) + " using 1:2 with points pt 9 ps 2.2 " + series_style(k) + " notitle";
      any_never = true;
    }
  }
  if (any_never)
    body += ", " + fixed(*axis.never, 6) + " with lines dt 2 lw 1 lc rgb \"#888888\" title " +
            gp_quote("never: a request never answered (triangles)");
  if (const auto s = slo(metric))
    body += ", " + fixed(*s, 6) + " with lines dt 3 lw 2.5 lc rgb \"black\" title " +
            gp_quote("SLO: " + metric + " = " + compact(*s));
  std::string axes;
  if (numeric) {
    const double a = *number(values.front()), b = *number(values.back());
    const double pad = (b - a) * 0.05;
    axes = "set xrange [" + fixed(a - pad, 6) + ":" + fixed(b + pad, 6) + "]\n";
    // An integer parameter (replicas, workers) gets integer ticks: from its
    // first value, a step of 1, 2 or 5 x 10^n, at most ten of them.
    const bool integral = std::all_of(values.begin(), values.end(), [](const std::string& v) {
      const double x = *number(v);
      return x == std::round(x) && std::fabs(x) < 1e15;
    });
    if (integral) {
      double step = 1;
      for (double decade = 1; (b - a) / step > 10; decade *= 10)
        for (double m : {1.0, 2.0, 5.0})
          if ((b - a) / step > 10) step = m * decade;
      axes += "set xtics " + fixed(a, 0) + ", " + fixed(step, 0) + "\nset format x \"%.0f\"\n";
    }
  } else {
    axes = "set xrange [-0.5:" + fixed(static_cast<double>(values.size()) - 0.5, 1) + "]\nset xtics (";
    // A category with no number in any row says so on the axis.
    for (std::size_t i = 0; i < values.size(); ++i) {
      const bool empty = std::find(empty_values.begin(), empty_values.end(), values[i]) != empty_values.end();
      axes += (i ? ", " : "") + gp_quote(values[i] + (empty ? " (empty: not measured)" : "")) + " " + std::to_string(i);
    }
    axes += ")\n";
  }
  plot(plot_name, "set title " + gp_quote(metric + " by " + param + ": mean over seeds, bars from p5 to p95" +
                                          (axis.log ? " (log scale)" : "")) +
                      "\nset xlabel " + gp_quote(param) + "\nset ylabel " + gp_quote(metric_label(metric)) + "\n" + axes +
                      axis.lines() + "set grid\nset key tmargin center horizontal\n" + body + "\n");
}

void ReportBuilder::sweep_seeds_only(const SweepTable& t, const std::string& name, const std::string& metric) {
  // A run that never answered counts in the share, so the curve ends below
  // 1 by the share of such runs.
  std::vector<double> v;
  std::size_t runs = 0;
  for (const auto& r : t.rows)
    if (const auto x = metric_value(r.at(metric))) {
      ++runs;
      if (!std::isinf(*x)) v.push_back(*x);
    }
  if (v.empty()) {
    md << "`" << metric << "` is never in every run: no distribution to draw.\n\n";
    return;
  }
  const Spread s = spread_of(v);
  const std::string plot_name = "sweep-" + stem_of(name) + "-" + stem_of(metric) + "-cdf";
  const std::string dat = plot_name + ".dat";
  std::string rows = "# " + metric + " share_of_runs\n" + fixed(s.min, 6) + " 0.0000\n";
  for (const auto& [x, y] : ecdf(v, runs)) rows += fixed(x, 6) + " " + fixed(y, 4) + "\n";
  file(dat, rows);
  const std::size_t never = runs - v.size();
  std::string body = "plot " + gp_quote(dat) + " using 1:2 with steps lw 2 " + series_style(0) + " title " +
                     gp_quote(metric + " (" + std::to_string(runs) + " runs" +
                              (never ? ", " + std::to_string(never) + " never: the curve ends below 1" : "") + ")");
  // The x axis spans the runs' values (and the SLO): a distribution is
  // read by its shape, which an axis from 0 would squash.
  double left = s.min, right = s.max;
  std::string marks;
  if (const auto o = slo(metric)) {
    left = std::min(left, *o);
    right = std::max(right, *o);
    marks = "set arrow from " + fixed(*o, 6) + ", graph 0 to " + fixed(*o, 6) +
            ", graph 1 nohead dt 3 lw 2.5 lc rgb \"black\"\nset label " + gp_quote("SLO " + figure(*o)) + " at " +
            fixed(*o, 6) + ", graph 1.03 center\n";
  }
  const double pad = right > left ? (right - left) * 0.05 : std::max(1.0, std::fabs(left) * 0.05);
  const std::pair<double, double> xr{left - pad, right + pad};
  plot(plot_name, "set title " + gp_quote(metric + ": distribution over " + std::to_string(runs) +
                                          " seeds (x axis: the runs' range)") +
                      "\nset xlabel " + gp_quote(metric_label(metric)) + "\nset ylabel \"share of runs at or below\"\nset xrange [" +
                      fixed(xr.first, 6) + ":" + fixed(xr.second, 6) + "]\nset yrange [0:1.05]\nset grid\n" +
                      "set key tmargin center horizontal\n" + marks + body + "\n");
  md << "![" << metric << " over seeds](" << plot_name << ".png)\n\n";
}

ReportBuilder::MetricColumns ReportBuilder::metric_columns(const SweepTable& t) {
  MetricColumns c;
  auto& [varying, constant, partly_empty, never, empty_where, never_rows] = c;
  for (const auto& col : t.columns)
    if (std::find(t.metrics.begin(), t.metrics.end(), col) == t.metrics.end()) never.push_back(col);
  for (const auto& m : t.metrics) {
    std::set<std::string> seen;
    std::size_t empty = 0;
    std::vector<std::string> groups;
    std::map<std::string, std::size_t> per_group;
    for (const auto& r : t.rows) {
      seen.insert(r.at(m));
      if (const auto v = metric_value(r.at(m))) {
        if (std::isinf(*v)) ++never_rows[m];
        continue;
      }
      ++empty;
      std::string g;
      for (const auto& q : t.params) g += (g.empty() ? "" : ",") + q + "=" + r.at(q);
      if (!per_group.count(g)) groups.push_back(g);
      ++per_group[g];
    }
    (seen.size() > 1 ? varying : constant).push_back(m);
    if (empty == 0) continue;
    partly_empty.push_back(m);
    std::string where = std::to_string(empty) + " of " + std::to_string(t.rows.size()) + " rows";
    if (!t.params.empty()) {
      where += ": ";
      for (std::size_t i = 0; i < groups.size() && i < 4; ++i)
        where += (i ? "; " : "") + groups[i] + " (" + std::to_string(per_group[groups[i]]) + ")";
      if (groups.size() > 4) where += "; and " + std::to_string(groups.size() - 4) + " more";
    }
    empty_where[m] = where;
  }
  return c;
}

// Without --metric, the metrics a sweep is about, those that vary first in
// this order: request latency and cost where apps serve; time to RUNNING and
// rejections in a deploy race; allocation and fragmentation for a packing
// workload. Then any other that varies, never the kernel's event count.
std::pair<std::vector<std::string>, std::string> ReportBuilder::default_metrics(const SweepTable& t,
                                                                                const MetricColumns& c) {
  const auto measured = [&](const std::string& m) {
    return std::find(t.metrics.begin(), t.metrics.end(), m) != t.metrics.end();
  };
  std::vector<std::string> order;
  std::string about;
  if (measured("req_completed")) {
    about = "apps serve requests: request latency and cost first";
    order = {"req_latency_p99_s", "cost_usd", "req_slo_attainment", "req_latency_p50_s", "gpu_hours_allocated",
             "req_refused", "req_timed_out", "req_failed", "replica_seconds"};
  } else if (measured("gpu_allocation")) {
    about = "a packing workload: allocation and fragmentation first";
    order = {"gpu_allocation", "gpu_fragmentation_share", "sampled_vram_utilisation", "pending_forever"};
  } else {
    about = "deploys: time to RUNNING and rejections first";
    order = {"ttr_p95_s", "rejected_deployments", "apps_reached_running", "ttr_p50_s", "gpu_hours_allocated",
             "jobs_never_started", "idle_node_seconds", "cost_usd"};
  }
  static const std::set<std::string> never_default = {"events", "expectations"};
  std::vector<std::string> out;
  const auto take = [&](const std::string& m) {
    if (out.size() < kDefaultMetrics && std::find(c.varying.begin(), c.varying.end(), m) != c.varying.end() &&
        std::find(out.begin(), out.end(), m) == out.end() && !never_default.count(m))
      out.push_back(m);
  };
  for (const auto& m : order) take(m);
  for (const auto& m : c.varying) take(m);
  return {out, about};
}

void ReportBuilder::sweep_summary(const SweepTable& t, const std::string& name, const MetricColumns& c,
                            const std::vector<std::string>& metrics) {
  std::set<std::string> seeds;
  for (const auto& r : t.rows) seeds.insert(r.at("seed"));
  md << "## Sweep: " << name << "\n\n" << t.rows.size() << " run(s), " << seeds.size() << " seed(s); parameters: ";
  if (t.params.empty()) md << "none (a sweep over seeds alone)";
  for (std::size_t i = 0; i < t.params.size(); ++i) md << (i ? ", " : "") << "`" << t.params[i] << "`";
  md << ".\n\n";
  const auto list = [&](const std::vector<std::string>& names, const std::string& what, bool with_value) {
    if (names.empty()) return;
    md << "- " << what << ": ";
    for (std::size_t i = 0; i < names.size(); ++i) {
      md << (i ? ", " : "") << "`" << names[i] << "`";
      if (with_value) md << " = " << (t.rows.empty() || t.rows[0].at(names[i]).empty() ? "empty" : t.rows[0].at(names[i]));
    }
    md << "\n";
  };
  list(c.constant, "the same in every run, so not drawn", true);
  std::vector<std::string> left;
  for (const auto& m : c.varying)
    if (std::find(metrics.begin(), metrics.end(), m) == metrics.end()) left.push_back(m);
  list(left, opt.metrics.empty() ? "vary but not drawn (the sweep is about " + default_metrics(t, c).second +
                                       ", at most " + std::to_string(kDefaultMetrics) + "; choose with --metric)"
                                 : "vary but not chosen with --metric",
       false);
  list(c.never, "no number in any row (not measured, or not applicable)", false);
  for (const auto& m : c.partly_empty)
    md << "- `" << m << "` is empty (not measured) in " << c.empty_where.at(m) << "; figures are over the other rows\n";
  for (const auto& [m, n] : c.never_rows)
    md << "- `" << m << "` is never (a request never answered: `inf`) in " << n << " of " << t.rows.size()
       << " rows; a mean over such a row is never, drawn at the top of the plot\n";
  md << "\n";
}

void ReportBuilder::sweep_seed_table(const SweepTable& t, const std::vector<std::string>& metrics) {
  md << "| metric | runs | mean | 95 % CI of the mean | p5 | p50 | p95 | min | max |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& m : metrics) {
    std::vector<double> v;
    for (const auto& r : t.rows)
      if (const auto x = metric_value(r.at(m))) v.push_back(*x);
    const Spread s = spread_of(v);
    const auto f = figure_or_never;
    md << "| " << m << " | " << s.n << " | " << f(s.mean) << " | "
       << (std::isinf(s.mean) ? std::string("never") : figure(s.mean - s.ci) + " to " + figure(s.mean + s.ci)) << " | "
       << f(s.p5) << " | " << f(s.p50) << " | " << f(s.p95) << " | " << f(s.min) << " | " << f(s.max) << " |\n";
  }
  md << "\n";
}

void ReportBuilder::sweep(const SweepTable& t) {
  const std::string name = std::filesystem::path(t.file).stem().string();
  for (const auto& m : opt.metrics)
    if (std::find(t.metrics.begin(), t.metrics.end(), m) == t.metrics.end())
      throw ReportInputError(t.file + ": --metric " + m + ": expected a column after 'seed' with a number in some row");
  const MetricColumns columns = metric_columns(t);
  std::vector<std::string> metrics = opt.metrics;
  if (metrics.empty()) metrics = default_metrics(t, columns).first;
  sweep_summary(t, name, columns, metrics);
  if (t.params.empty()) {
    sweep_seed_table(t, metrics);
    for (const auto& m : metrics) sweep_seeds_only(t, name, m);
    return;
  }
  for (const auto& metric : metrics) {
    // One y axis per metric, whatever parameter is on the x axis.
    std::vector<double> finite;
    bool never = false;
    for (const auto& r : t.rows)
      if (const auto x = metric_value(r.at(metric))) {
        if (std::isinf(*x)) never = true;
        else finite.push_back(*x);
      }
    if (const auto s = slo(metric)) finite.push_back(*s);
    for (const auto& param : t.params) sweep_by_param(t, name, param, metric, sweep_axis(finite, never));
  }
}

}  // namespace report_detail

using report_detail::t975;
using namespace report_plot;

std::vector<std::pair<std::string, double>> sweep_curve(const SweepTable& t, const std::string& param,
                                                        const std::string& metric) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& c : sweep_curves(SweepTable{t.file, {param}, t.metrics, t.rows, t.columns}, param, metric))
    out.insert(out.end(), c.points.begin(), c.points.end());
  return out;
}

Spread spread_of(const std::vector<double>& values) {
  Spread s;
  s.n = values.size();
  if (values.empty()) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  if (std::isinf(s.mean)) {
    s.ci = s.mean;  // a run that never answered: the mean is never, and so is its interval
  } else if (s.n > 1) {
    double ss = 0;
    for (double v : values) ss += (v - s.mean) * (v - s.mean);
    const double sd = std::sqrt(ss / static_cast<double>(s.n - 1));
    s.ci = t975(s.n - 1) * sd / std::sqrt(static_cast<double>(s.n));
  }
  s.p5 = *nearest_rank_percentile(values, 5);
  s.p50 = *nearest_rank_percentile(values, 50);
  s.p95 = *nearest_rank_percentile(values, 95);
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  return s;
}

std::vector<SweepSeries> sweep_curves(const SweepTable& t, const std::string& param, const std::string& metric) {
  // A parameter with one value in every row tells the series nothing: it is
  // left out of their labels.
  std::vector<std::string> telling;
  for (const auto& q : t.params) {
    if (q == param) continue;
    std::set<std::string> seen;
    for (const auto& r : t.rows)
      if (auto v = r.find(q); v != r.end()) seen.insert(v->second);
    if (seen.size() > 1) telling.push_back(q);
  }
  std::vector<std::string> labels, order;
  std::map<std::string, std::map<std::string, std::vector<double>>> by_label;  // label -> value -> numbers
  for (const auto& r : t.rows) {
    auto p = r.find(param);
    auto m = r.find(metric);
    if (p == r.end() || m == r.end()) continue;
    std::string label;
    for (const auto& q : telling) label += (label.empty() ? "" : ",") + q + "=" + r.at(q);
    if (!by_label.count(label)) labels.push_back(label);
    auto& values = by_label[label];
    if (std::find(order.begin(), order.end(), p->second) == order.end()) order.push_back(p->second);
    if (const auto v = metric_value(m->second)) values[p->second].push_back(*v);
  }
  std::vector<SweepSeries> out;
  for (const auto& l : labels) {
    SweepSeries s{l, {}, {}};
    for (const auto& value : order) {
      auto it = by_label[l].find(value);
      if (it == by_label[l].end()) continue;
      s.spread.push_back(spread_of(it->second));
      s.points.emplace_back(value, s.spread.back().mean);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace vramsim
