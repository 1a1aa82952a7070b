#include "analysis/report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <istream>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/report_plot.hpp"
#include "analysis/trace_diff.hpp"

namespace vramsim {
namespace {

using namespace report_plot;

constexpr std::size_t kMaxNodeLines = 12;  // more lines than this read as noise
constexpr std::size_t kMaxSweepCurves = 8;
constexpr std::size_t kDefaultMetrics = 4;

// Student's t at 97.5 % for `df` degrees of freedom (1.96 beyond 30).
double t975(std::size_t df) {
  static const double t[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                             2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                             2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  return df == 0 ? 0 : df <= 30 ? t[df - 1] : 1.96;
}

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
    out += "set yrange [" + fixed(lo, 6) + ":" + fixed(hi, 6) + "]\n";
    if (never) out += never_ytics(log ? lo : std::min(0.0, lo), highest, log, *never);
    return out;
  }
  double clamp(double v) const { return never && v > *never ? *never : v; }
};

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

struct ReportBuilder {
  const ReportOptions& opt;
  ReportFiles out;
  std::ostringstream md;

  void file(const std::string& name, const std::string& text) { out.files.emplace_back(name, text); }
  void plot(const std::string& name, const std::string& body) {
    file(name + ".gp", plot_script(name, body));
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

void ReportBuilder::runs(const std::vector<TracedRun>& runs) {
  md << "## Runs\n\n| trace | scenario | policies | seed | apps | RUNNING | p50 s | p95 s | max s |\n"
        "|---|---|---|---|---|---|---|---|---|\n";
  std::map<std::string, std::pair<std::vector<double>, std::size_t>> by_policy;  // times, apps
  for (const auto& r : runs) {
    std::vector<double> t;
    for (const auto& a : r.apps)
      if (a.to_running_s) t.push_back(*a.to_running_s);
    auto& p = by_policy[r.policies];
    p.first.insert(p.first.end(), t.begin(), t.end());
    p.second += r.apps.size();
    md << "| " << r.file << " | " << r.scenario << " | " << r.policies << " | " << r.seed << " | " << r.apps.size()
       << " | " << t.size() << " | " << (t.empty() ? "-" : fixed(percentile(t, 50))) << " | "
       << (t.empty() ? "-" : fixed(percentile(t, 95))) << " | " << (t.empty() ? "-" : fixed(percentile(t, 100)))
       << " |\n";
  }
  double right_s = 1;  // every curve runs to the slowest app of any policy
  for (const auto& [label, tp] : by_policy)
    for (double x : tp.first) right_s = std::max(right_s, x * 1.05);
  const TimeUnit u = time_unit(right_s);
  std::string body;
  std::size_t k = 0;
  for (const auto& [label, tp] : by_policy) {
    const std::string dat = "time-to-running-" + stem_of(label) + ".dat";
    std::string rows = "# " + u.name + "_since_deploy share_of_apps\n0 0\n";
    double last = 0;
    for (const auto& [x, y] : ecdf(tp.first, tp.second)) {
      rows += fixed(x / u.seconds, 4) + " " + fixed(y, 4) + "\n";
      last = y;
    }
    rows += fixed(right_s / u.seconds, 4) + " " + fixed(last, 4) + "\n";
    file(dat, rows);
    body += std::string(k ? ", " : "plot ") + gp_quote(dat) + " using 1:2 with steps lw 2 " + series_style(k) +
            " title " + gp_quote(label + " (" + std::to_string(tp.first.size()) + "/" + std::to_string(tp.second) + ")");
    ++k;
  }
  plot("time-to-running",
       "set title \"Time from deploy to RUNNING, by policy (share of all apps deployed)\"\n"
       "set xlabel " + gp_quote(u.name + " since the app's first deploy request") +
           "\nset ylabel \"share of apps RUNNING\"\nset xrange [0:*]\nset yrange [0:1.05]\n"
           "set key tmargin center horizontal\nset grid\n" + body + "\n");
  md << "\nApps that never reached RUNNING count in the share, so a curve that ends below 1 shows them.\n\n"
        "![time to RUNNING](time-to-running.png)\n\n";
}

// Two pictures per serving app: request latency over time (p50, p95 and p99
// of each window, drawn over the window it covers, with the app's SLO), and
// replicas over time against the traffic.
void ReportBuilder::serving(const std::string& name, const std::vector<ServeSeries>& series) {
  for (const ServeSeries& s : series) {
    if (s.points.empty()) continue;
    const double t1 = s.points.back().t;
    const TimeUnit u = time_unit(t1);
    const std::string base = stem_of(name) + "-" + stem_of(s.app);
    // Per window two rows, its start and its end, so that each value lies
    // over the window it covers; a window without answers is a gap (NaN).
    std::string windows = "# " + u.name + "(window start, then end) p50_s p95_s p99_s arrival_rate_per_s\n";
    std::string samples = "# " + u.name + "(window end) replicas ongoing_requests never\n";
    double top_latency = 0, low_latency = 0, top_replicas = 0, top_rate = 0, never = 0, last_answer = 0;
    std::optional<double> top_p99;
    std::size_t over_slo = 0, answered = 0;
    const bool has_p99 = std::any_of(s.points.begin(), s.points.end(), [](const ServePoint& p) { return p.p99; });
    for (const ServePoint& p : s.points) {
      auto cell = [](std::optional<double> v) { return v ? fixed(*v, 3) : std::string("NaN"); };
      const std::string values = " " + cell(p.p50) + " " + cell(p.p95) + " " + cell(p.p99) + " " + fixed(p.arrival_rate, 6) + "\n";
      windows += fixed(std::max(0.0, p.t - s.window_s) / u.seconds, 4) + values + fixed(p.t / u.seconds, 4) + values;
      samples += fixed(p.t / u.seconds, 4) + " " + fixed(p.replicas, 0) + " " + fixed(p.ongoing, 0) + " " +
                 fixed(p.never, 0) + "\n";
      const std::optional<double> top = p.p99 ? p.p99 : p.p95;
      if (top) {
        ++answered;
        last_answer = p.t;
        top_latency = std::max(top_latency, *top);
        if (p.p99) top_p99 = std::max(top_p99.value_or(0), *p.p99);
        if (s.slo_latency_s && *top > *s.slo_latency_s) ++over_slo;
      }
      if (p.p50 && *p.p50 > 0) low_latency = low_latency > 0 ? std::min(low_latency, *p.p50) : *p.p50;
      top_replicas = std::max(top_replicas, p.replicas);
      top_rate = std::max(top_rate, p.arrival_rate);
      never += p.never;
    }
    const std::string dat = "serve-" + base + ".dat", rep_dat = "serve-" + base + "-replicas.dat";
    file(dat, windows);
    file(rep_dat, samples);
    const std::string top_name = has_p99 ? "p99" : "p95";
    md << "## Serving: " << s.app << " (" << name << ")\n\n" << s.points.size() << " window(s) of "
       << compact(s.window_s) << " s; the highest " << top_name << " of a window " << figure(top_latency) << " s";
    if (s.slo_latency_s)
      md << "; the SLO " << compact(*s.slo_latency_s) << " s, missed by the " << top_name << " of " << over_slo << " of "
         << answered << " window(s) with answers";
    md << "; at most " << figure(top_replicas) << " replica(s) running; " << figure(never)
       << " request(s) refused or timed out.\n\n";
    // A log axis when the latencies span more than two decades (a cold
    // start of minutes over a steady state of seconds), so both read.
    double hi = top_latency;
    if (s.slo_latency_s) hi = std::max(hi, *s.slo_latency_s);
    double lo = low_latency;
    if (s.slo_latency_s) lo = lo > 0 ? std::min(lo, *s.slo_latency_s) : *s.slo_latency_s;
    const bool log_y = lo > 0 && hi / lo > 100;
    const std::string y_axis = log_y ? "set logscale y\nset yrange [" + fixed(lo / 1.5, 6) + ":" + fixed(hi * 1.5, 6) + "]\n"
                                     : yrange_line(y_range(0, hi));
    std::string body = "plot " + gp_quote(dat) + " using 1:2 with lines lw 2 " + series_style(0) + " title \"p50\", " +
                       gp_quote(dat) + " using 1:3 with lines lw 2 " + series_style(1) + " title \"p95\"";
    if (has_p99) body += ", " + gp_quote(dat) + " using 1:4 with lines lw 2 " + series_style(3) + " title \"p99\"";
    if (s.slo_latency_s)
      body += ", " + fixed(*s.slo_latency_s, 6) + " with lines dt 3 lw 2.5 lc rgb \"black\" title " +
              gp_quote("SLO " + compact(*s.slo_latency_s) + " s");
    const std::string lat = "serve-latency-" + base;
    // The x axis ends with the last window that answered (the replicas'
    // plot shows what follows).
    const double lat_end = answered ? std::min(t1, last_answer + s.window_s) : t1;
    plot(lat, "set title " + gp_quote("Request latency per " + compact(s.window_s) + " s window: " + s.app +
                                      (log_y ? " (log scale)" : "")) +
                  "\nset xlabel " + gp_quote("time (" + u.name + "); each value drawn over the window it covers") +
                  "\nset ylabel \"latency (s)\"\nset xrange [0:" + fixed(lat_end / u.seconds, 4) + "]\n" + y_axis +
                  "set key tmargin center horizontal\nset grid\n" + body + "\n");
    const std::string rep = "serve-replicas-" + base;
    plot(rep, "set title " + gp_quote("Replicas against the traffic: " + s.app) + "\nset xlabel " +
                  gp_quote("time (" + u.name + ")") + "\nset ylabel \"replicas running (at each window's end)\"\n"
                  "set y2label \"arrivals per second (over each window)\"\nset ytics nomirror\nset y2tics\n"
                  "set xrange [0:" + fixed(t1 / u.seconds, 4) + "]\n" + yrange_line(y_range(0, top_replicas)) +
                  integer_ytics(top_replicas) +
                  "set y2range [0:" + fixed(y_range(0, top_rate).second, 6) +
                  "]\nset key tmargin center horizontal\nset grid\nplot " + gp_quote(rep_dat) + " using 1:2 with steps lw 2 " +
                  series_style(0) + " title \"replicas\", " + gp_quote(dat) + " using 1:5 axes x1y2 with lines lw 1.5 " +
                  series_style(2) + " title \"arrivals per second\"\n");
    md << "![latency](" << lat << ".png)\n\n![replicas](" << rep << ".png)\n\n";
  }
}

void ReportBuilder::timelines(const std::vector<std::pair<std::string, std::vector<NodeSeries>>>& timelines) {
  // One y range for every timeline, so the policies' pictures compare.
  double top = 0;
  for (const auto& [name, series] : timelines)
    for (const auto& s : series)
      if (s.tracked()) top = std::max({top, s.offered, s.peak});
  for (const auto& [name, series] : timelines) {
    md << "## VRAM booked per node: " << name << "\n\n" << series.size() << " node(s)";
    std::vector<const NodeSeries*> drawn;
    std::vector<std::string> untracked;
    for (const auto& s : series) {
      if (s.tracked()) drawn.push_back(&s);
      else untracked.push_back(s.node);
    }
    if (drawn.empty()) {
      md << ". VRAM_MB not advertised by any node: booking not tracked, so no plot is drawn (a booking of 0 here "
            "means \"unknown\", never \"free\").\n\n";
      continue;
    }
    std::stable_sort(drawn.begin(), drawn.end(),
                     [](const NodeSeries* a, const NodeSeries* b) { return a->peak > b->peak; });
    const std::size_t tracked = drawn.size();
    if (drawn.size() > kMaxNodeLines) drawn.resize(kMaxNodeLines);
    double t0 = 0, t1 = 0;
    bool first = true;
    for (const auto& s : series)
      for (const auto& [t, v] : s.points) {
        t0 = first ? t : std::min(t0, t);
        t1 = first ? t : std::max(t1, t);
        first = false;
      }
    const TimeUnit u = time_unit(t1 - t0);
    const std::string plot_name = "vram-" + stem_of(name);
    std::string body;
    std::size_t k = 0;
    for (const NodeSeries* s : drawn) {
      const std::string dat = plot_name + "-" + stem_of(s->node) + ".dat";
      std::string rows = "# " + u.name + "_since_start used_vram_mb time_s (start " + fixed(t0, 3) + " s)\n";
      for (const auto& [t, v] : s->points)
        rows += fixed((t - t0) / u.seconds, 4) + " " + fixed(v, 0) + " " + fixed(t, 3) + "\n";
      file(dat, rows);
      body += std::string(k ? ", " : "plot ") + gp_quote(dat) + " using 1:2 with steps lw 2 " + series_style(k) +
              " title " + gp_quote(s->node);
      ++k;
    }
    // What the nodes offer: one dashed line per distinct total.
    std::map<double, std::size_t> offers;
    for (const NodeSeries* s : drawn) ++offers[s->offered];
    for (const auto& [mb, count] : offers)
      body += ", " + fixed(mb, 0) + " with lines dt 2 lw 1.5 lc rgb \"#404040\" title " +
              gp_quote("offered " + fixed(mb, 0) + " MB (" + std::to_string(count) + (count == 1 ? " node)" : " nodes)"));
    plot(plot_name, "set title " + gp_quote("VRAM booked per node (" + name + "); dashed: VRAM_MB offered") +
                        "\nset xlabel " +
                        gp_quote(u.name + " since the first sample (t = " + fixed(t0, 0) + " s of the run)") +
                        "\nset ylabel \"VRAM_MB booked\"\nset xrange [0:*]\n" + yrange_line(y_range(0, top)) +
                        "set key tmargin center horizontal\nset grid\n" + body + "\n");
    md << ", " << tracked << " advertising VRAM_MB";
    if (tracked > drawn.size()) md << "; the " << drawn.size() << " with the highest peak are drawn";
    md << ".";
    if (!untracked.empty()) {
      md << " VRAM_MB not advertised (booking not tracked, not drawn): ";
      for (std::size_t i = 0; i < untracked.size(); ++i) md << (i ? ", " : "") << untracked[i];
      md << ".";
    }
    md << "\n\n![VRAM booked per node](" << plot_name << ".png)\n\n";
  }
}

// The rows' values of `param`: numbers sorted, else in first-seen order.
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

}  // namespace

std::string policy_label(const Json& policies) {
  if (!policies.is_object() || policies.empty()) return "default";
  std::set<std::string> variants;
  std::string joined;
  for (auto it = policies.begin(); it != policies.end(); ++it) {
    const std::string v = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
    variants.insert(v);
    joined += (joined.empty() ? "" : ",") + it.key() + "=" + v;
  }
  return variants.size() == 1 ? *variants.begin() : joined;
}

TracedRun traced_run(const std::string& file, const std::vector<TraceEvent>& events) {
  TracedRun r;
  r.file = file;
  auto start = std::find_if(events.begin(), events.end(), [](const TraceEvent& e) { return e.kind == TraceKind::run_started; });
  if (start == events.end()) throw ReportInputError(file + ": no run_started event: not a vramsim trace");
  if (start->fields.contains("scenario") && start->fields["scenario"].is_string())
    r.scenario = start->fields["scenario"].get<std::string>();
  if (start->fields.contains("seed") && start->fields["seed"].is_number_integer() &&
      (start->fields["seed"].is_number_unsigned() || start->fields["seed"].get<std::int64_t>() >= 0))
    r.seed = start->fields["seed"].get<std::uint64_t>();
  r.policies = policy_label(start->fields.contains("policies") ? start->fields["policies"] : Json());
  for (const auto& a : deploy_to_running(events))
    r.apps.push_back(AppTiming{a.app, a.running ? std::optional<double>(to_seconds(*a.running - a.requested))
                                                : std::nullopt});
  return r;
}

namespace {
// The position of a header column, or a ReportInputError naming it.
std::size_t column_index(const std::vector<std::string>& header, const std::string& name, const std::string& path) {
  auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) throw ReportInputError(path + ": line 1: no column '" + name + "'");
  return static_cast<std::size_t>(it - header.begin());
}
}  // namespace

std::vector<NodeSeries> read_status_timeline(const std::string& path) {
  std::ifstream in = open_input(path);
  std::vector<std::string> header, cells;
  std::size_t n = 0;
  if (!read_csv_record(in, header, n, path) || header.size() < 2 || header[0] != "time_s" || header[1] != "node")
    throw ReportInputError(path + ": line 1: expected the status timeline header time_s,node,used_gpu,used_vram_mb,...");
  const auto col = [&](const std::string& name) { return column_index(header, name, path); };
  const std::size_t c_time = col("time_s"), c_node = col("node"), c_vram = col("used_vram_mb"),
                    c_total = col("total_vram_mb");
  std::vector<NodeSeries> out;
  std::map<std::string, std::size_t> at;
  while (read_csv_record(in, cells, n, path)) {
    if (cells.size() == 1 && cells[0].empty()) continue;
    if (cells == header) continue;  // a repeated header: another series
    check_width(cells, header.size(), path, n);
    const auto t = number(cells[c_time]);
    const auto v = number(cells[c_vram]);
    const auto total = number(cells[c_total]);
    if (!t || !v || !total)
      throw ReportInputError(path + ": line " + std::to_string(n) +
                             ": expected numbers in time_s, used_vram_mb and total_vram_mb");
    auto [it, added] = at.emplace(cells[c_node], out.size());
    if (added) out.push_back(NodeSeries{cells[c_node], {}, 0, 0});
    NodeSeries& s = out[it->second];
    s.points.emplace_back(*t, *v);
    s.peak = std::max(s.peak, *v);
    s.offered = std::max(s.offered, *total);
  }
  return out;
}

// `latency_p99_s`, `window_s` and `slo_latency_s` came later: a timeline
// without them is read, its window from the spacing of its rows.
std::vector<ServeSeries> read_serve_timeline(const std::string& path) {
  std::ifstream in = open_input(path);
  std::vector<std::string> header, cells;
  std::size_t n = 0;
  if (!read_csv_record(in, header, n, path) || header.size() < 3 || header[0] != "time_s" || header[1] != "app")
    throw ReportInputError(path + ": line 1: expected the serving timeline header time_s,app,arrival_rate_per_s,...");
  const auto col = [&](const std::string& name) { return column_index(header, name, path); };
  const auto optional_col = [&](const std::string& name) -> std::optional<std::size_t> {
    auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) return std::nullopt;
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t c_t = col("time_s"), c_app = col("app"), c_rate = col("arrival_rate_per_s"),
                    c_p50 = col("latency_p50_s"), c_p95 = col("latency_p95_s"), c_rep = col("replicas"),
                    c_never = col("never"), c_on = col("ongoing_requests");
  const auto c_p99 = optional_col("latency_p99_s"), c_window = optional_col("window_s"),
             c_slo = optional_col("slo_latency_s");
  std::vector<ServeSeries> out;
  std::map<std::string, std::size_t> at;
  const auto bad = [&](const std::string& what) {
    return ReportInputError(path + ": line " + std::to_string(n) + ": " + what);
  };
  while (read_csv_record(in, cells, n, path)) {
    if (cells.size() == 1 && cells[0].empty()) continue;
    check_width(cells, header.size(), path, n);
    ServePoint p;
    const auto t = number(cells[c_t]), rate = number(cells[c_rate]), rep = number(cells[c_rep]),
               nev = number(cells[c_never]), on = number(cells[c_on]);
    if (!t || !rate || !rep || !nev || !on)
      throw bad("expected numbers in time_s, arrival_rate_per_s, never, replicas and ongoing_requests");
    p.t = *t;
    p.arrival_rate = *rate;
    p.replicas = *rep;
    p.never = *nev;
    p.ongoing = *on;
    std::vector<std::pair<std::size_t, std::optional<double>*>> latencies = {{c_p50, &p.p50}, {c_p95, &p.p95}};
    if (c_p99) latencies.emplace_back(*c_p99, &p.p99);
    for (auto [c, dst] : latencies) {
      if (cells[c].empty()) continue;  // no request completed in the window
      const auto v = number(cells[c]);
      if (!v || *v < 0) throw bad(header[c] + ": expected a number >= 0 or nothing, got '" + cells[c] + "'");
      *dst = *v;
    }
    auto [it, added] = at.emplace(cells[c_app], out.size());
    if (added) out.push_back(ServeSeries{cells[c_app], {}, 0, std::nullopt});
    ServeSeries& s = out[it->second];
    if (c_window) {
      const auto w = number(cells[*c_window]);
      if (!w || *w <= 0) throw bad("window_s: expected a number > 0, got '" + cells[*c_window] + "'");
      s.window_s = *w;
    }
    if (c_slo && !cells[*c_slo].empty()) {
      const auto v = number(cells[*c_slo]);
      if (!v || *v <= 0) throw bad("slo_latency_s: expected a number > 0 or nothing, got '" + cells[*c_slo] + "'");
      s.slo_latency_s = *v;
    }
    if (!s.points.empty() && p.t <= s.points.back().t)
      throw bad("time_s: expected the app's windows in time order, got " + cells[c_t] + " after " +
                figure(s.points.back().t));
    s.points.push_back(p);
  }
  for (ServeSeries& s : out) {
    if (s.window_s > 0) continue;
    s.window_s = s.points.front().t;  // the first window starts at 0
    for (std::size_t i = 1; i < s.points.size(); ++i) s.window_s = std::min(s.window_s, s.points[i].t - s.points[i - 1].t);
    if (s.window_s <= 0) s.window_s = 1;
  }
  return out;
}

SweepTable read_sweep_csv(const std::string& path) {
  std::ifstream in = open_input(path);
  SweepTable t;
  t.file = path;
  std::vector<std::string> header, cells;
  std::size_t n = 0;
  if (!read_csv_record(in, header, n, path)) throw ReportInputError(path + ": empty file: expected a sweep CSV header");
  auto seed = std::find(header.begin(), header.end(), "seed");
  if (seed == header.end()) throw ReportInputError(path + ": line 1: expected a sweep CSV header with a 'seed' column");
  t.params.assign(header.begin(), seed);
  t.columns.assign(seed + 1, header.end());
  while (read_csv_record(in, cells, n, path)) {
    if (cells.size() == 1 && cells[0].empty()) continue;
    check_width(cells, header.size(), path, n);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size(); ++i) row[header[i]] = cells[i];
    t.rows.push_back(std::move(row));
  }
  // A metric is a column after `seed` that holds a number (or "inf", never)
  // in some row.
  for (const auto& c : t.columns)
    if (std::any_of(t.rows.begin(), t.rows.end(), [&](const auto& r) { return metric_value(r.at(c)).has_value(); }))
      t.metrics.push_back(c);
  return t;
}

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
  s.p5 = percentile(values, 5);
  s.p50 = percentile(values, 50);
  s.p95 = percentile(values, 95);
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

bool all_numbers(const std::vector<std::string>& values) {
  return !values.empty() && std::all_of(values.begin(), values.end(), [](const auto& v) { return number(v).has_value(); });
}

std::vector<std::pair<double, double>> ecdf(std::vector<double> values, std::size_t total) {
  std::sort(values.begin(), values.end());
  std::vector<std::pair<double, double>> out;
  if (total == 0) return out;
  for (std::size_t i = 0; i < values.size(); ++i)
    out.emplace_back(values[i], static_cast<double>(i + 1) / static_cast<double>(total));
  return out;
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const std::size_t i = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return values[std::min(i, values.size() - 1)];
}

TimeUnit time_unit(double span_s) {
  if (span_s < 600) return {"s", 1};
  if (span_s < 3 * 3600) return {"min", 60};
  return {"h", 3600};
}

std::pair<double, double> y_range(double lo, double hi) {
  if (hi < lo) std::swap(lo, hi);
  const double bottom = std::min(0.0, lo), top = std::max(0.0, hi);
  const double span = top - bottom;
  if (span <= 0) return {0, 1};
  return {bottom < 0 ? bottom - 0.1 * span : 0, top + 0.1 * span};
}

std::string series_style(std::size_t k) {
  static const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  constexpr std::size_t n = sizeof colours / sizeof *colours;
  return std::string("lc rgb \"") + colours[k % n] + "\" dt " + std::to_string(1 + k / n);
}

std::pair<std::string, double> parse_slo(const std::string& text) {
  const auto eq = text.find('=');
  const auto v = eq == std::string::npos ? std::nullopt : number(text.substr(eq + 1));
  if (eq == std::string::npos || eq == 0 || !v)
    throw ReportInputError("--slo '" + text + "': expected METRIC=NUMBER, such as ttr_p95_s=600");
  return {text.substr(0, eq), *v};
}

ReportFiles build_report(const ReportInputs& in, const ReportOptions& opt) {
  ReportBuilder b{opt, {}, {}};
  b.md << "# Report: " << in.title << "\n\n";
  if (!in.runs.empty()) b.runs(in.runs);
  if (!in.timelines.empty()) b.timelines(in.timelines);
  for (const auto& [name, series] : in.serving) b.serving(name, series);
  for (const auto& t : in.sweeps) b.sweep(t);
  for (const auto& t : in.plans) plan_section(t, b.out, b.md);
  if (!in.fragmentation.empty()) frag_section(in.fragmentation, b.out, b.md);
  b.out.markdown = b.md.str();
  return std::move(b.out);
}

}  // namespace vramsim
