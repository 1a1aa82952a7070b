// vramsim report on a plan CSV: the configurations evaluated as a table,
// and per SLO the cost frontier with the SLO line and the chosen point.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <ostream>

#include "analysis/report.hpp"
#include "analysis/report_plot.hpp"

namespace vramsim {
namespace {

using namespace report_plot;

constexpr double kInf = std::numeric_limits<double>::infinity();

// A plan figure: a number, or "inf" (a request that never completed).
double plan_number(const std::string& path, std::size_t line, const std::string& column, const std::string& cell) {
  if (cell == "inf") return kInf;
  const auto v = number(cell);
  if (!v) throw ReportInputError(path + ": line " + std::to_string(line) + ": " + column + ": expected a number, got '" +
                                 cell + "'");
  return *v;
}

PlanSlo slo_of(const std::string& path, const std::string& metric, const std::string& cond) {
  PlanSlo s;
  s.metric = metric;
  s.condition = cond;
  const std::size_t op = cond.size() > 1 && cond[1] == '=' ? 2 : 1;
  const auto v = cond.empty() ? std::nullopt : number(cond.substr(op));
  if (!v || (cond[0] != '<' && cond[0] != '>'))
    throw ReportInputError(path + ": line 2: " + metric + "_slo: expected <=V, <V, >=V or >V, got '" + cond + "'");
  s.value = *v;
  s.upper = cond[0] == '<';
  return s;
}

bool better(const PlanSlo& s, double a, double b) { return s.upper ? a < b : a > b; }

std::string setting(const PlanTable& t, const PlanTable::Row& r) {
  std::string out;
  for (std::size_t p = 0; p < t.params.size(); ++p) out += (p ? " " : "") + t.params[p] + "=" + r.values[p];
  return out.empty() ? "the scenario as written" : out;
}

std::string cell(double v) { return std::isinf(v) ? "never" : figure(v); }

// One SLO's plot: its points by what the search learnt of them (infinite
// bounds cannot be drawn), the frontier and its labels.
struct PlanPoints {
  std::string met, missed, partial, chosen, frontier, labels[2];
  double lo = 0, hi = 0, x_hi = 0;
  std::size_t never = 0;
  std::vector<bool> varies;               // per parameter: differs between rows
  std::vector<std::size_t> on_frontier;   // rows, cheapest first
  const PlanTable::Row* picked = nullptr; // the chosen row, if any
  bool chosen_on_frontier = false;
};

// A frontier point is labelled with the values that differ between rows.
std::string varying_values(const PlanPoints& p, const PlanTable::Row& r) {
  std::string v;
  for (std::size_t i = 0; i < r.values.size(); ++i)
    if (p.varies[i]) v += (v.empty() ? "" : ",") + r.values[i];
  return v;
}

std::string point(double x, double y) { return fixed(x, 6) + " " + fixed(y, 9); }

PlanPoints plan_points(const PlanTable& t, std::size_t k) {
  PlanPoints p;
  p.lo = p.hi = t.slos[k].value;
  for (const auto& r : t.rows) {
    const double y = r.bound[k];
    if (std::isinf(y)) {
      ++p.never;
      continue;
    }
    p.lo = std::min(p.lo, y), p.hi = std::max(p.hi, y), p.x_hi = std::max(p.x_hi, r.objective);
    const std::string row = point(r.objective, y) + "\n";
    (r.decision != "all_seeds" ? p.partial : r.met.value_or(false) ? p.met : p.missed) += row;
    if (r.chosen) p.chosen += row;
  }
  p.varies.assign(t.params.size(), false);
  for (const auto& r : t.rows)
    for (std::size_t i = 0; i < t.params.size(); ++i) p.varies[i] = p.varies[i] || r.values[i] != t.rows[0].values[i];
  std::size_t label_count = 0;
  p.on_frontier = plan_frontier(t, k);
  for (std::size_t i : p.on_frontier) {
    const auto& r = t.rows[i];
    p.frontier += point(r.objective, r.bound[k]) + "\n";
    p.chosen_on_frontier = p.chosen_on_frontier || r.chosen;
    // Alternately above and below: the frontier steps down to the right, so
    // two neighbours' labels do not meet.
    p.labels[label_count++ % 2] += point(r.objective, r.bound[k]) + " " + gp_quote(varying_values(p, r)) + "\n";
  }
  // A chosen point off the frontier is labelled too (above it).
  const auto picked = std::find_if(t.rows.begin(), t.rows.end(), [](const auto& r) { return r.chosen; });
  if (picked != t.rows.end()) p.picked = &*picked;
  if (p.picked && !p.chosen_on_frontier && !std::isinf(p.picked->bound[k]))
    p.labels[0] += point(p.picked->objective, p.picked->bound[k]) + " " +
                   gp_quote("chosen: " + varying_values(p, *p.picked)) + "\n";
  return p;
}

// The gnuplot `plot` command of the points' series and the SLO line; the
// data files go into `out`.
std::string frontier_series(const PlanTable& t, const PlanSlo& s, const std::string& plot_name, const PlanPoints& p,
                            ReportFiles& out) {
  std::string body;
  const auto series = [&](const std::string& dat, const std::string& rows, const std::string& style,
                          const std::string& title) {
    if (rows.empty()) return;
    out.files.emplace_back(dat, "# " + t.objective + " " + s.metric + "_bound\n" + rows);
    body += std::string(body.empty() ? "plot " : ", ") + gp_quote(dat) + " using 1:2 " + style + " title " +
            gp_quote(title);
  };
  series(plot_name + "-frontier.dat", p.frontier, "with steps lw 2 lc rgb \"#7f7f7f\"",
         "frontier: cheapest for its " + s.metric);
  series(plot_name + "-met.dat", p.met, "with points pt 7 ps 1.4 lc rgb \"#2ca02c\"", "meets the SLO (every seed)");
  series(plot_name + "-missed.dat", p.missed, "with points pt 2 ps 1.6 lw 2 lc rgb \"#d62728\"",
         "misses the SLO (every seed)");
  series(plot_name + "-partial.dat", p.partial, "with points pt 6 ps 1.4 lc rgb \"#ff7f0e\"",
         "stopped early (bound over the seeds run)");
  series(plot_name + "-chosen.dat", p.chosen, "with points pt 3 ps 3.5 lw 3 lc rgb \"black\"", "chosen");
  for (int side = 0; side < 2; ++side) {
    if (p.labels[side].empty()) continue;
    const std::string dat = plot_name + "-labels-" + std::to_string(side) + ".dat";
    out.files.emplace_back(dat, p.labels[side]);
    body += ", " + gp_quote(dat) + " using 1:2:3 with labels left offset 0.8," + (side ? "-1" : "1") + " notitle";
  }
  return body + ", " + fixed(s.value, 9) + " with lines dt 3 lw 2.5 lc rgb \"black\" title " +
         gp_quote("SLO: " + s.metric + " " + s.condition);
}

// What the plot's labels give, why a chosen point lies off the frontier, and
// what could not be drawn.
void explain_frontier(const PlanTable& t, const PlanSlo& s, const PlanPoints& p, std::ostream& md) {
  std::string named;
  for (std::size_t i = 0; i < t.params.size(); ++i)
    if (p.varies[i]) named += (named.empty() ? "`" : ", `") + t.params[i] + "`";
  if (!named.empty()) md << "The frontier's labels give " << named << ", in that order.\n\n";
  if (p.picked && !p.chosen_on_frontier) {
    // The frontier point that beats it: the dearest one no dearer than it.
    const PlanTable::Row* beats = nullptr;
    for (std::size_t f : p.on_frontier)
      if (t.rows[f].objective <= p.picked->objective) beats = &t.rows[f];
    if (beats)
      md << "The chosen configuration lies off the frontier: " << setting(t, *beats) << " measured "
         << figure(p.picked->objective - beats->objective) << " less " << t.objective
         << " with a bound as good. Along a `--monotone` dimension a plan takes each line's first passing value, "
            "declared no dearer than the values after it (`serving.md`, \"Planning\").\n\n";
  }
  if (p.never)
    md << p.never << " configuration(s) had a request that never completed in some seed (an infinite " << s.metric
       << "): listed in the table, not drawn.\n\n";
}

void frontier_plot(const PlanTable& t, std::size_t k, const std::string& name, ReportFiles& out, std::ostream& md) {
  const PlanSlo& s = t.slos[k];
  const std::string plot_name = "plan-" + stem_of(name) + "-" + stem_of(s.metric);
  const PlanPoints p = plan_points(t, k);
  const std::string body = frontier_series(t, s, plot_name, p, out);
  // Bounds that span two decades or more read on a log axis.
  const bool log_y = p.lo > 0 && p.hi / p.lo >= 100;
  const std::string y_axis = log_y ? "set logscale y\nset yrange [" + fixed(p.lo / 2, 9) + ":" + fixed(p.hi * 2, 9) +
                                         "]\n"
                                   : yrange_line(y_range(std::min(0.0, p.lo), p.hi));
  out.files.emplace_back(plot_name + ".gp",
                         plot_script(plot_name, "set title " + gp_quote(t.objective + " against the " + s.metric +
                                                                        " bound, per configuration evaluated") +
                                                    "\nset xlabel " + gp_quote(metric_label(t.objective)) +
                                                    "\nset ylabel " + gp_quote(metric_label(s.metric) + ", bound") +
                                                    "\nset xrange [0:" + fixed(std::max(p.x_hi, 1e-9) * 1.4, 6) +
                                                    "]\n" + y_axis + "set format y \"%g\"\nset grid\n" +
                                                    "set key below center horizontal maxrows 2\n" + body + "\n"));
  out.scripts.push_back(plot_name);
  md << "![" << t.objective << " against " << s.metric << "](" << plot_name << ".png)\n\n";
  explain_frontier(t, s, p, md);
}

}  // namespace

PlanTable read_plan_csv(const std::string& path) {
  std::ifstream in = open_input(path);
  return read_plan_csv(in, path);
}

PlanTable read_plan_csv(std::istream& in, const std::string& path) {
  PlanTable t;
  t.file = path;
  std::vector<std::string> header, cells;
  std::size_t n = 0;
  if (!read_csv_record(in, header, n, path)) throw ReportInputError(path + ": empty file: expected a plan CSV header");
  const auto col = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw ReportInputError(path + ": line 1: expected a plan CSV column '" + name + "'");
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t c_seeds = col("seeds_run"), c_decision = col("decision"), c_met = col("slo_met"),
                    c_chosen = col("chosen");
  if (c_decision != c_seeds + 1 || c_met < c_decision + 1 || (c_met - c_decision - 1) % 3 != 0 ||
      c_chosen != c_met + 2)
    throw ReportInputError(path + ": line 1: expected PARAMS...,seeds_run,decision,(METRIC_mean,METRIC_bound,"
                                  "METRIC_slo)...,slo_met,OBJECTIVE,chosen,...");
  t.params.assign(header.begin(), header.begin() + static_cast<std::ptrdiff_t>(c_seeds));
  t.objective = header[c_met + 1];
  std::vector<std::string> metrics;
  for (std::size_t c = c_decision + 1; c < c_met; c += 3) {
    const std::string& m = header[c];
    if (m.size() < 6 || m.compare(m.size() - 5, 5, "_mean") != 0 || header[c + 1] != m.substr(0, m.size() - 5) + "_bound")
      throw ReportInputError(path + ": line 1: column " + std::to_string(c + 1) + ": expected METRIC_mean, then _bound");
    metrics.push_back(m.substr(0, m.size() - 5));
  }
  while (read_csv_record(in, cells, n, path)) {
    if (cells.size() == 1 && cells[0].empty()) continue;
    check_width(cells, header.size(), path, n);
    if (t.slos.empty())
      for (std::size_t k = 0; k < metrics.size(); ++k)
        t.slos.push_back(slo_of(path, metrics[k], cells[c_decision + 3 + 3 * k]));
    PlanTable::Row r;
    r.values.assign(cells.begin(), cells.begin() + static_cast<std::ptrdiff_t>(c_seeds));
    const double seeds = plan_number(path, n, "seeds_run", cells[c_seeds]);
    if (!(seeds >= 1 && seeds <= 1e6))
      throw ReportInputError(path + ": line " + std::to_string(n) + ": seeds_run: expected from 1 to 1000000");
    r.seeds_run = static_cast<std::size_t>(seeds);
    r.decision = cells[c_decision];
    if (r.decision != "all_seeds" && r.decision != "certain_fail" && r.decision != "pruned")
      throw ReportInputError(path + ": line " + std::to_string(n) +
                             ": decision: expected all_seeds, certain_fail or pruned, got '" + r.decision + "'");
    for (std::size_t k = 0; k < metrics.size(); ++k) {
      r.mean.push_back(plan_number(path, n, header[c_decision + 1 + 3 * k], cells[c_decision + 1 + 3 * k]));
      r.bound.push_back(plan_number(path, n, header[c_decision + 2 + 3 * k], cells[c_decision + 2 + 3 * k]));
    }
    if (cells[c_met] == "0" || cells[c_met] == "1") r.met = cells[c_met] == "1";
    else if (!cells[c_met].empty())
      throw ReportInputError(path + ": line " + std::to_string(n) + ": slo_met: expected 0, 1 or empty");
    r.objective = plan_number(path, n, t.objective, cells[c_met + 1]);
    if (cells[c_chosen] != "0" && cells[c_chosen] != "1")
      throw ReportInputError(path + ": line " + std::to_string(n) + ": chosen: expected 0 or 1");
    r.chosen = cells[c_chosen] == "1";
    t.rows.push_back(std::move(r));
  }
  return t;
}

std::vector<std::size_t> plan_frontier(const PlanTable& t, std::size_t k) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    if (t.rows[i].decision == "all_seeds" && !std::isinf(t.rows[i].bound[k])) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return t.rows[a].objective < t.rows[b].objective; });
  std::vector<std::size_t> out;
  for (std::size_t i : order)
    if (out.empty() || better(t.slos[k], t.rows[i].bound[k], t.rows[out.back()].bound[k])) out.push_back(i);
  return out;
}

void plan_section(const PlanTable& t, ReportFiles& out, std::ostream& md) {
  const std::string name = std::filesystem::path(t.file).stem().string();
  md << "## Plan: " << name << "\n\n" << t.rows.size() << " configuration(s) evaluated; objective `" << t.objective
     << "` (mean over seeds); SLOs:";
  for (const auto& s : t.slos) md << " `" << s.metric << " " << s.condition << "`";
  md << " (each on its bound across seeds).\n\n";
  const auto chosen = std::find_if(t.rows.begin(), t.rows.end(), [](const auto& r) { return r.chosen; });
  if (chosen == t.rows.end()) {
    md << "No configuration evaluated meets the SLOs.\n\n";
  } else {
    md << "Chosen: **" << setting(t, *chosen) << "**, " << t.objective << " " << figure(chosen->objective);
    for (std::size_t k = 0; k < t.slos.size(); ++k)
      md << ", " << t.slos[k].metric << " bound " << cell(chosen->bound[k]) << " (" << t.slos[k].condition << ")";
    md << ".\n\n";
  }
  std::vector<std::size_t> order(t.rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return t.rows[a].objective < t.rows[b].objective; });
  md << "| configuration | seeds | ended |";
  for (const auto& s : t.slos) md << " " << s.metric << " mean | bound |";
  md << " meets | " << t.objective << " |\n|---|---|---|";
  for (std::size_t k = 0; k < t.slos.size(); ++k) md << "---|---|";
  md << "---|---|\n";
  for (std::size_t i : order) {
    const auto& r = t.rows[i];
    md << "| " << (r.chosen ? "**" + setting(t, r) + "** (chosen)" : setting(t, r)) << " | " << r.seeds_run << " | "
       << r.decision << " |";
    for (std::size_t k = 0; k < t.slos.size(); ++k) md << " " << cell(r.mean[k]) << " | " << cell(r.bound[k]) << " |";
    md << " " << (r.met ? (*r.met ? "yes" : "no") : "-") << " | " << figure(r.objective) << " |\n";
  }
  md << "\n";
  for (std::size_t k = 0; k < t.slos.size(); ++k) frontier_plot(t, k, name, out, md);
}

}  // namespace vramsim
