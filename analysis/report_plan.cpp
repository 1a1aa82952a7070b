// vramsim report on a plan CSV: the configurations evaluated as a table,
// and per SLO the cost frontier with the SLO line and the chosen point.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <ostream>
#include <set>

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

// What the search learnt of a configuration, drawn as the point's shape.
enum class Outcome { Met, Missed, Pruned };
const char* const kOutcomeName[] = {"met", "missed", "pruned"};
const char* const kOutcomeShape[] = {"pt 7 ps 1.5", "pt 2 ps 1.8 lw 2", "pt 4 ps 1.5 lw 1.5"};
const char* const kOutcomeColour[] = {"#2ca02c", "#d62728", "#ff7f0e"};  // when no dimension colours the points
const char* const kOutcomeTitle[] = {"meets the SLO", "misses the SLO", "stopped early (cost)"};

Outcome outcome_of(const PlanTable::Row& r) {
  if (r.decision == "pruned") return Outcome::Pruned;
  if (r.decision == "all_seeds" && r.met.value_or(false)) return Outcome::Met;
  return Outcome::Missed;
}

// One SLO's plot: every configuration as a point (its shape what the search
// learnt of it, its colour the value of the dimension asked about), the
// frontier and its labels; an infinite bound on a "never" level on top.
struct PlanPoints {
  std::vector<bool> varies;                // per parameter: differs between rows
  std::optional<std::size_t> colour_by;    // the parameter whose value colours the points
  std::vector<std::string> groups;         // its values, first-seen order
  std::vector<std::size_t> on_frontier;    // rows, cheapest first
  const PlanTable::Row* picked = nullptr;  // the chosen row, if any
  bool chosen_on_frontier = false;
  double lo = 0, hi = 0, x_hi = 0;         // over the finite bounds and the SLO
  std::size_t never = 0;                   // rows with an infinite bound
  bool log_y = false;
  double never_y = 0;                      // where an infinite bound is drawn
  double y_lo = 0, y_hi = 1;               // the y axis
  std::vector<std::string> dropped_labels; // frontier labels that would overprint another
};

// The points are coloured by the first varied parameter that is not a
// number (the GPU model), else, with two or more varied, by the varied one
// with the fewest values (at most 6); else by what the search learnt.
std::optional<std::size_t> colour_dimension(const PlanTable& t, const std::vector<bool>& varies) {
  std::vector<std::set<std::string>> values(t.params.size());
  for (const auto& r : t.rows)
    for (std::size_t i = 0; i < t.params.size(); ++i) values[i].insert(r.values[i]);
  std::size_t varied = 0;
  for (std::size_t i = 0; i < t.params.size(); ++i) {
    if (!varies[i]) continue;
    ++varied;
    if (values[i].size() <= 10 &&
        std::any_of(values[i].begin(), values[i].end(), [](const std::string& v) { return !number(v); }))
      return i;
  }
  if (varied < 2) return std::nullopt;
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < t.params.size(); ++i)
    if (varies[i] && values[i].size() <= 6 && (!best || values[i].size() < values[*best].size())) best = i;
  return best;
}

// A frontier point is labelled with the values that differ between rows,
// but for the one its colour gives.
std::string varying_values(const PlanPoints& p, const PlanTable::Row& r) {
  std::string v;
  for (std::size_t i = 0; i < r.values.size(); ++i)
    if (p.varies[i] && p.colour_by != i) v += (v.empty() ? "" : ",") + r.values[i];
  return v;
}

std::string point(double x, double y) { return fixed(x, 6) + " " + fixed(y, 9); }

PlanPoints plan_points(const PlanTable& t, std::size_t k) {
  PlanPoints p;
  p.lo = p.hi = t.slos[k].value;
  p.varies.assign(t.params.size(), false);
  for (const auto& r : t.rows)
    for (std::size_t i = 0; i < t.params.size(); ++i) p.varies[i] = p.varies[i] || r.values[i] != t.rows[0].values[i];
  p.colour_by = colour_dimension(t, p.varies);
  for (const auto& r : t.rows) {
    p.x_hi = std::max(p.x_hi, r.objective);
    if (p.colour_by && std::find(p.groups.begin(), p.groups.end(), r.values[*p.colour_by]) == p.groups.end())
      p.groups.push_back(r.values[*p.colour_by]);
    const double y = r.bound[k];
    if (std::isinf(y)) ++p.never;
    else p.lo = std::min(p.lo, y), p.hi = std::max(p.hi, y);
  }
  // Bounds that span two decades or more read on a log axis.
  p.log_y = p.lo > 0 && p.hi / p.lo >= 100;
  const double bottom = std::min(0.0, p.lo);
  p.never_y = p.log_y ? p.hi * 4 : p.hi + 0.15 * (p.hi - bottom);
  if (p.log_y) p.y_lo = p.lo / 2, p.y_hi = (p.never ? p.never_y : p.hi) * 2;
  else p.y_lo = bottom, p.y_hi = p.never ? p.never_y + 0.1 * (p.never_y - bottom) : y_range(bottom, p.hi).second;
  p.on_frontier = plan_frontier(t, k);
  const auto picked = std::find_if(t.rows.begin(), t.rows.end(), [](const auto& r) { return r.chosen; });
  if (picked != t.rows.end()) p.picked = &*picked;
  for (std::size_t i : p.on_frontier) p.chosen_on_frontier = p.chosen_on_frontier || t.rows[i].chosen;
  return p;
}

// The labels of the frontier (and of a chosen point off it), each above or
// below its point, whichever is clear of the labels placed so far; one
// clear of neither is left out (and named under the plot).
void place_labels(const PlanTable& t, std::size_t k, PlanPoints& p, std::string labels[2]) {
  const double x_span = std::max(p.x_hi, 1e-9) * 1.4;
  const auto rel_y = [&](double y) {
    if (p.log_y) return std::log(y / p.y_lo) / std::log(p.y_hi / p.y_lo);
    return (y - p.y_lo) / std::max(p.y_hi - p.y_lo, 1e-12);
  };
  struct Box {
    double x0, x1, y0, y1;
  };
  std::vector<Box> placed;
  const auto place = [&](double x, double y, const std::string& text) {
    // About 7 px a character on a 1000 x 600 picture whose plot is ~800 x 450.
    const double w = (static_cast<double>(text.size()) * 7 + 10) / 800, h = 18.0 / 450;
    const double rx = x / x_span, ry = rel_y(y);
    for (int side = 0; side < 2; ++side) {
      const Box b{rx + 0.01, rx + 0.01 + w, side ? ry - 0.02 - h : ry + 0.02, side ? ry - 0.02 : ry + 0.02 + h};
      const bool clear = std::none_of(placed.begin(), placed.end(), [&](const Box& o) {
        return b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1;
      });
      if (!clear) continue;
      placed.push_back(b);
      labels[side] += point(x, y) + " " + gp_quote(text) + "\n";
      return;
    }
    p.dropped_labels.push_back(text);
  };
  if (p.picked && !p.chosen_on_frontier && !std::isinf(p.picked->bound[k]))
    place(p.picked->objective, p.picked->bound[k], "chosen: " + varying_values(p, *p.picked));
  for (std::size_t i : p.on_frontier) {
    const std::string text = varying_values(p, t.rows[i]);
    if (!text.empty()) place(t.rows[i].objective, t.rows[i].bound[k], text);
  }
}

// The gnuplot `plot` command of the points' series and the SLO line; the
// data files go into `out`.
std::string frontier_series(const PlanTable& t, std::size_t k, const std::string& plot_name, PlanPoints& p,
                            ReportFiles& out) {
  const PlanSlo& s = t.slos[k];
  std::string body;
  const auto add = [&](const std::string& text) { body += (body.empty() ? "plot " : ", ") + text; };
  const std::string head = "# " + t.objective + " " + s.metric + "_bound (\"never\": drawn at " + fixed(p.never_y, 6) + ")\n";
  std::string frontier;
  for (std::size_t i : p.on_frontier) frontier += point(t.rows[i].objective, t.rows[i].bound[k]) + "\n";
  if (!frontier.empty()) {
    out.files.emplace_back(plot_name + "-frontier.dat", head + frontier);
    add(gp_quote(plot_name + "-frontier.dat") + " using 1:2 with steps lw 2 lc rgb \"#7f7f7f\" title \"cost frontier\"");
  }
  // The points, one file per colour and shape.
  const std::size_t groups = p.colour_by ? p.groups.size() : 1;
  for (std::size_t g = 0; g < groups; ++g)
    for (Outcome o : {Outcome::Met, Outcome::Missed, Outcome::Pruned}) {
      std::string rows;
      for (const auto& r : t.rows)
        if (outcome_of(r) == o && (!p.colour_by || r.values[*p.colour_by] == p.groups[g]))
          rows += point(r.objective, std::isinf(r.bound[k]) ? p.never_y : r.bound[k]) + "\n";
      if (rows.empty()) continue;
      const auto oi = static_cast<std::size_t>(o);
      const std::string dat =
          plot_name + "-" + kOutcomeName[oi] + (p.colour_by ? "-" + stem_of(p.groups[g]) : std::string()) + ".dat";
      out.files.emplace_back(dat, head + rows);
      add(gp_quote(dat) + " using 1:2 with points " + kOutcomeShape[oi] + " " +
          (p.colour_by ? series_style(g) : std::string("lc rgb \"") + kOutcomeColour[oi] + "\"") +
          (p.colour_by ? std::string(" notitle") : " title " + gp_quote(kOutcomeTitle[oi])));
    }
  // With colours by a dimension, the key names each colour and each shape.
  if (p.colour_by) {
    for (std::size_t g = 0; g < p.groups.size(); ++g)
      add("keyentry with points pt 5 ps 1.5 " + series_style(g) + " title " + gp_quote(p.groups[g]));
    for (Outcome o : {Outcome::Met, Outcome::Missed, Outcome::Pruned}) {
      const auto oi = static_cast<std::size_t>(o);
      if (std::any_of(t.rows.begin(), t.rows.end(), [&](const auto& r) { return outcome_of(r) == o; }))
        add(std::string("keyentry with points ") + kOutcomeShape[oi] + " lc rgb \"black\" title " +
            gp_quote(kOutcomeTitle[oi]));
    }
  }
  std::string chosen;
  if (p.picked) chosen = point(p.picked->objective, std::isinf(p.picked->bound[k]) ? p.never_y : p.picked->bound[k]) + "\n";
  if (!chosen.empty()) {
    out.files.emplace_back(plot_name + "-chosen.dat", head + chosen);
    add(gp_quote(plot_name + "-chosen.dat") + " using 1:2 with points pt 3 ps 3.5 lw 3 lc rgb \"black\" title \"chosen\"");
  }
  std::string labels[2];
  place_labels(t, k, p, labels);
  for (int side = 0; side < 2; ++side) {
    if (labels[side].empty()) continue;
    const std::string dat = plot_name + "-labels-" + std::to_string(side) + ".dat";
    out.files.emplace_back(dat, labels[side]);
    add(gp_quote(dat) + " using 1:2:3 with labels left offset 0.8," + (side ? "-1" : "1") + " notitle");
  }
  if (p.never)
    add(fixed(p.never_y, 9) + " with lines dt 2 lw 1 lc rgb \"#888888\" title \"never completed\"");
  add(fixed(s.value, 9) + " with lines dt 3 lw 2.5 lc rgb \"black\" title " + gp_quote("SLO " + s.condition));
  return body;
}

// What the plot's labels give, why a chosen point lies off the frontier, and
// what could not be drawn.
void explain_frontier(const PlanTable& t, const PlanSlo& s, const PlanPoints& p, std::ostream& md) {
  std::string named;
  for (std::size_t i = 0; i < t.params.size(); ++i)
    if (p.varies[i] && p.colour_by != i) named += (named.empty() ? "`" : ", `") + t.params[i] + "`";
  if (p.colour_by) md << "The colours give `" << t.params[*p.colour_by] << "`; the shapes what the search learnt. ";
  if (!named.empty()) md << "The frontier's labels give " << named << ", in that order.";
  md << "\n\n";
  if (!p.dropped_labels.empty()) {
    md << "Labels left out where they would print over another: ";
    for (std::size_t i = 0; i < p.dropped_labels.size(); ++i) md << (i ? ", " : "") << p.dropped_labels[i];
    md << " (the table has every configuration).\n\n";
  }
  if (p.picked && !p.chosen_on_frontier) {
    // The frontier point that beats it: the dearest one no dearer than it.
    const PlanTable::Row* beats = nullptr;
    for (std::size_t f : p.on_frontier)
      if (t.rows[f].objective <= p.picked->objective) beats = &t.rows[f];
    if (beats)
      md << "The chosen configuration lies off the frontier: " << setting(t, *beats) << " measured "
         << figure(p.picked->objective - beats->objective) << " less " << t.objective
         << " with a bound as good. Along a `--monotone` dimension a plan takes each line's first passing value, "
            "declared no dearer than the values after it (`planning.md`).\n\n";
  }
  if (p.never)
    md << p.never << " configuration(s) had a request that never completed in some seed (an infinite " << s.metric
       << " bound): drawn on the \"never\" level at the top.\n\n";
}

void frontier_plot(const PlanTable& t, std::size_t k, const std::string& name, ReportFiles& out, std::ostream& md) {
  const PlanSlo& s = t.slos[k];
  const std::string plot_name = "plan-" + stem_of(name) + "-" + stem_of(s.metric);
  PlanPoints p = plan_points(t, k);
  const std::string body = frontier_series(t, k, plot_name, p, out);
  std::string y_axis = std::string(p.log_y ? "set logscale y\n" : "") + "set yrange [" + fixed(p.y_lo, 9) + ":" +
                       fixed(p.y_hi, 9) + "]\n";
  if (p.never) y_axis += never_ytics(p.log_y ? p.y_lo : std::min(0.0, p.lo), p.hi, p.log_y, p.never_y);
  // The key names the colours' dimension.
  const std::string key_title = p.colour_by ? " title " + gp_quote("colour: " + t.params[*p.colour_by]) : "";
  out.files.emplace_back(plot_name + ".gp",
                         plot_script(plot_name, "set title " + gp_quote(t.objective + " against the " + s.metric +
                                                                        " bound, per configuration evaluated" +
                                                                        (p.log_y ? " (log scale)" : "")) +
                                                    "\nset xlabel " + gp_quote(metric_label(t.objective)) +
                                                    "\nset ylabel " + gp_quote(metric_label(s.metric) + ", bound") +
                                                    "\nset xrange [0:" + fixed(std::max(p.x_hi, 1e-9) * 1.4, 6) +
                                                    "]\n" + y_axis + "set format y \"%g\"\nset grid\n" +
                                                    "set key outside right top vertical Left reverse samplen 2" +
                                                    key_title + "\n" + body +
                                                    "\n"));
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
