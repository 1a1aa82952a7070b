#include "analysis/report.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/report_builder.hpp"
#include "analysis/report_plot.hpp"
#include "engine/stats.hpp"

namespace vramsim {
namespace report_detail {

using namespace report_plot;

constexpr std::size_t kMaxNodeLines = 12;  // more lines than this read as noise

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
       << " | " << t.size() << " | " << (t.empty() ? "-" : fixed(*nearest_rank_percentile(t, 50))) << " | "
       << (t.empty() ? "-" : fixed(*nearest_rank_percentile(t, 95))) << " | " << (t.empty() ? "-" : fixed(*nearest_rank_percentile(t, 100)))
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
}  // namespace report_detail

using namespace report_plot;

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
  report_detail::ReportBuilder b{opt, {}, {}};
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
