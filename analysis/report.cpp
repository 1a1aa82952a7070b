#include "analysis/report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "analysis/trace_diff.hpp"

namespace vramsim {
namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  // The CSVs read here quote nothing; a quoted field is kept as written.
  std::vector<std::string> out;
  std::string cell;
  std::stringstream ss(line);
  while (std::getline(ss, cell, ',')) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    const double v = std::stod(s, &used);
    if (used != s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::ifstream open_input(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ReportInputError(path + ": cannot open for reading");
  return in;
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
  auto start = std::find_if(events.begin(), events.end(), [](const TraceEvent& e) { return e.kind == "run_started"; });
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
  std::string line;
  if (!std::getline(in, line) || line.rfind("time_s,node,", 0) != 0)
    throw ReportInputError(path + ": line 1: expected the status timeline header time_s,node,used_gpu,used_vram_mb,...");
  const auto header = split_csv_line(line);
  const auto col = [&](const std::string& name) -> std::size_t {
    auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw ReportInputError(path + ": line 1: no column '" + name + "'");
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t c_time = col("time_s"), c_node = col("node"), c_vram = col("used_vram_mb");
  std::vector<NodeSeries> out;
  std::map<std::string, std::size_t> at;
  std::size_t n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line.rfind("time_s,", 0) == 0) continue;  // a repeated header: another series
    const auto cells = split_csv_line(line);
    if (cells.size() != header.size())
      throw ReportInputError(path + ": line " + std::to_string(n) + ": expected " + std::to_string(header.size()) +
                             " columns, found " + std::to_string(cells.size()));
    const auto t = number(cells[c_time]);
    const auto v = number(cells[c_vram]);
    if (!t || !v)
      throw ReportInputError(path + ": line " + std::to_string(n) + ": expected numbers in time_s and used_vram_mb");
    auto [it, added] = at.emplace(cells[c_node], out.size());
    if (added) out.push_back(NodeSeries{cells[c_node], {}, 0});
    NodeSeries& s = out[it->second];
    s.points.emplace_back(*t, *v);
    s.peak = std::max(s.peak, *v);
  }
  return out;
}

SweepTable read_sweep_csv(const std::string& path) {
  std::ifstream in = open_input(path);
  SweepTable t;
  t.file = path;
  std::string line;
  if (!std::getline(in, line)) throw ReportInputError(path + ": empty file: expected a sweep CSV header");
  const auto header = split_csv_line(line);
  auto seed = std::find(header.begin(), header.end(), "seed");
  if (seed == header.end()) throw ReportInputError(path + ": line 1: expected a sweep CSV header with a 'seed' column");
  t.params.assign(header.begin(), seed);
  const std::vector<std::string> after(seed + 1, header.end());
  std::size_t n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    const auto cells = split_csv_line(line);
    if (cells.size() != header.size())
      throw ReportInputError(path + ": line " + std::to_string(n) + ": expected " + std::to_string(header.size()) +
                             " columns, found " + std::to_string(cells.size()));
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size(); ++i) row[header[i]] = cells[i];
    t.rows.push_back(std::move(row));
  }
  // A metric is a column after `seed` that holds a number in some row.
  for (const auto& c : after)
    if (std::any_of(t.rows.begin(), t.rows.end(), [&](const auto& r) { return number(r.at(c)).has_value(); }))
      t.metrics.push_back(c);
  return t;
}

std::vector<std::pair<std::string, double>> sweep_curve(const SweepTable& t, const std::string& param,
                                                        const std::string& metric) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<double, std::size_t>> sums;
  for (const auto& r : t.rows) {
    auto p = r.find(param);
    auto m = r.find(metric);
    if (p == r.end() || m == r.end()) continue;
    const auto v = number(m->second);
    if (!v) continue;
    auto [it, added] = sums.emplace(p->second, std::make_pair(0.0, std::size_t{0}));
    if (added) order.push_back(p->second);
    it->second.first += *v;
    ++it->second.second;
  }
  std::vector<std::pair<std::string, double>> out;
  for (const auto& k : order) out.emplace_back(k, sums[k].first / static_cast<double>(sums[k].second));
  return out;
}

std::vector<SweepSeries> sweep_curves(const SweepTable& t, const std::string& param, const std::string& metric) {
  std::vector<std::string> labels;
  std::map<std::string, SweepTable> by_label;
  for (const auto& r : t.rows) {
    std::string label;
    for (const auto& q : t.params)
      if (q != param) label += (label.empty() ? "" : ",") + q + "=" + r.at(q);
    auto [it, added] = by_label.emplace(label, SweepTable{t.file, t.params, t.metrics, {}});
    if (added) labels.push_back(label);
    it->second.rows.push_back(r);
  }
  std::vector<SweepSeries> out;
  for (const auto& l : labels) out.push_back(SweepSeries{l, sweep_curve(by_label.at(l), param, metric)});
  return out;
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

}  // namespace vramsim
