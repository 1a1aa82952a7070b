// The report's inputs as vramsim writes them: traces, status and serving
// timelines and sweep CSVs, each read by the column names its writer
// declares.
#include "analysis/report.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "analysis/csv_columns.hpp"
#include "analysis/report_plot.hpp"
#include "analysis/trace_diff.hpp"
#include "models/status.hpp"

namespace vramsim {

using namespace report_plot;

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


std::vector<NodeSeries> read_status_timeline(const std::string& path) {
  std::ifstream in = open_input(path);
  std::vector<std::string> header, cells;
  std::size_t n = 0;
  namespace c = status_timeline_columns;
  if (!read_csv_record(in, header, n, path) || header.size() < 2 || header[0] != c::time_s || header[1] != c::node)
    throw ReportInputError(path + ": line 1: expected the status timeline header time_s,node,used_gpu,used_vram_mb,...");
  const CsvHeader h(header, path);
  const std::size_t c_time = h.at(c::time_s), c_node = h.at(c::node), c_vram = h.at(c::used_vram_mb),
                    c_total = h.at(c::total_vram_mb);
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
  namespace c = serve_timeline_columns;
  if (!read_csv_record(in, header, n, path) || header.size() < 3 || header[0] != c::time_s || header[1] != c::app)
    throw ReportInputError(path + ": line 1: expected the serving timeline header time_s,app,arrival_rate_per_s,...");
  const CsvHeader h(header, path);
  const std::size_t c_t = h.at(c::time_s), c_app = h.at(c::app), c_rate = h.at(c::arrival_rate_per_s),
                    c_p50 = h.at(c::latency_p50_s), c_p95 = h.at(c::latency_p95_s), c_rep = h.at(c::replicas),
                    c_never = h.at(c::never), c_on = h.at(c::ongoing_requests);
  const auto c_p99 = h.find(c::latency_p99_s), c_window = h.find(c::window_s), c_slo = h.find(c::slo_latency_s);
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

}  // namespace vramsim
