#include "analysis/trace_diff.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <iomanip>
#include <set>
#include <stdexcept>
#include <tuple>

#include "engine/format.hpp"

namespace vramsim {

void DeployToRunning::add(const TraceEvent& e) {
  if (e.kind != TraceKind::deploy_requested && e.kind != TraceKind::app_state) return;
  if (!e.fields.contains("app") || !e.fields["app"].is_string()) return;
  const std::string& app = e.fields["app"].get_ref<const std::string&>();
  if (e.kind == TraceKind::deploy_requested) {
    if (index_.emplace(app, out_.size()).second) out_.push_back(AppToRunning{app, e.t, std::nullopt});
  } else if (e.fields.contains("to") && e.fields["to"] == "RUNNING") {
    auto it = index_.find(app);
    if (it != index_.end() && !out_[it->second].running) out_[it->second].running = e.t;
  }
}

std::vector<AppToRunning> deploy_to_running(const std::vector<TraceEvent>& events) {
  DeployToRunning d;
  for (const auto& e : events) d.add(e);
  return d.apps();
}

std::vector<TraceEvent> read_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the trace for reading");
  return parse_trace(in, path);
}

std::vector<TraceEvent> parse_trace(std::istream& in, const std::string& path) {
  std::vector<TraceEvent> out;
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("t") || !j["t"].is_number_integer() ||
        !j.contains("kind") || !j["kind"].is_string())
      throw std::runtime_error(path + ": line " + std::to_string(n) +
                               ": expected a trace event {\"t\": <integer us>, \"kind\": <string>, ...}");
    TraceEvent ev;
    ev.t = j["t"].is_number_unsigned() && j["t"].get<std::uint64_t>() > kMaxTraceTime ? -1 : j["t"].get<SimTime>();
    // Times are bounded and in order, so that differences of them are too.
    if (ev.t < 0 || ev.t > kMaxTraceTime)
      throw std::runtime_error(path + ": line " + std::to_string(n) + ": expected \"t\" from 0 to " +
                               std::to_string(kMaxTraceTime) + " us, got " + j["t"].dump());
    if (!out.empty() && ev.t < out.back().t)
      throw std::runtime_error(path + ": line " + std::to_string(n) + ": expected \"t\" >= " +
                               std::to_string(out.back().t) + " (the previous event's), got " + j["t"].dump());
    const auto kind = trace_kind_named(j["kind"].get<std::string>());
    if (!kind)
      throw std::runtime_error(path + ": line " + std::to_string(n) + ": unknown event kind " + j["kind"].dump() +
                               " (docs/trace-format.md lists the kinds)");
    ev.kind = *kind;
    j.erase("t");
    j.erase("kind");
    ev.fields = std::move(j);
    out.push_back(std::move(ev));
  }
  if (in.bad()) throw std::runtime_error(path + ": read error");
  return out;
}

bool world_specific_kind(TraceKind kind) {
  switch (kind) {
    case TraceKind::agent_gone: case TraceKind::agent_refused: case TraceKind::agent_unreachable:
    case TraceKind::slurm_error: case TraceKind::job_orphan_cancelled: case TraceKind::signal:
    case TraceKind::status: case TraceKind::run_ended: case TraceKind::job_pending:
    case TraceKind::job_submit_delayed: case TraceKind::head_warning: case TraceKind::slurm_outage:
    case TraceKind::replica_memory:
      return true;
    default:
      return false;
  }
}

namespace {

struct Milestones {
  std::map<std::string, SimTime> at;
};

const TraceEvent* first_after(const std::vector<TraceEvent>& ev, std::size_t from, SimTime t,
                              const std::function<bool(const TraceEvent&)>& pred, std::size_t* index = nullptr) {
  for (std::size_t i = from; i < ev.size(); ++i)
    if (ev[i].t >= t && pred(ev[i])) {
      if (index) *index = i;
      return &ev[i];
    }
  return nullptr;
}

// The app's path to RUNNING, as named milestones (absent ones omitted).
std::vector<std::pair<std::string, SimTime>> app_milestones(const std::vector<TraceEvent>& ev, const std::string& app) {
  std::vector<std::pair<std::string, SimTime>> m;
  std::size_t i0 = 0;
  const TraceEvent* req = first_after(ev, 0, 0, [&](const TraceEvent& e) {
    return e.kind == TraceKind::deploy_requested && e["app"] == app; }, &i0);
  if (!req) return m;
  m.emplace_back("deploy requested", req->t);
  if (auto* e = first_after(ev, i0, req->t, [&](const TraceEvent& x) { return x.kind == TraceKind::admission && x["app"] == app; }))
    m.emplace_back("admission", e->t);
  // The worker that ran the app's first replica: from its placement back to its job.
  const TraceEvent* placed = first_after(ev, i0, req->t, [&](const TraceEvent& x) {
    return x.kind == TraceKind::replica_placed && x["app"] == app; });
  if (placed) {
    const std::string job = placed->fields.value("job", "");
    auto job_event = [&](TraceKind kind) {
      return first_after(ev, 0, 0, [&](const TraceEvent& x) { return x.kind == kind && x["job"] == job; });
    };
    if (!job.empty()) {
      const TraceEvent* sub = job_event(TraceKind::job_submitted);
      // The scale-up that asked for that job: the last one before it.
      if (sub) {
        const TraceEvent* up = nullptr;
        for (const auto& x : ev)
          if (x.kind == TraceKind::scale_up && x.t <= sub->t) up = &x;
        if (up && up->t >= req->t) m.emplace_back("scale-up", up->t);
        if (sub->t >= req->t) m.emplace_back("job submitted", sub->t);
      }
      if (auto* s = job_event(TraceKind::job_started); s && s->t >= req->t) m.emplace_back("job started", s->t);
      if (auto* r = first_after(ev, 0, 0, [&](const TraceEvent& x) { return x.kind == TraceKind::node_registered && x["job"] == job; });
          r && r->t >= req->t)
        m.emplace_back("node registered", r->t);
    }
    m.emplace_back("replica placed", placed->t);
  }
  if (auto* r = first_after(ev, i0, req->t, [&](const TraceEvent& x) { return x.kind == TraceKind::replica_running && x["app"] == app; }))
    m.emplace_back("replica running", r->t);
  if (auto* r = first_after(ev, i0, req->t, [&](const TraceEvent& x) {
        return x.kind == TraceKind::app_state && x["app"] == app && x["to"] == "RUNNING"; }))
    m.emplace_back("RUNNING", r->t);
  std::stable_sort(m.begin(), m.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
  return m;
}

std::map<std::string, Duration> app_phases(const std::vector<TraceEvent>& ev, const std::string& app) {
  std::map<std::string, SimTime> at;
  for (const auto& [name, t] : app_milestones(ev, app)) at.emplace(name, t);
  // phase -> (from milestone, to milestone)
  static const std::vector<std::tuple<std::string, std::string, std::string>> pairs = {
      {"until the scale-up tick", "deploy requested", "scale-up"},
      {"sbatch", "scale-up", "job submitted"},
      {"SLURM queue wait", "job submitted", "job started"},
      {"node boot + registration", "job started", "node registered"},
      {"introspection + admission", "deploy requested", "admission"},
      {"placement", "node registered", "replica placed"},
      {"runtime env + replica init", "replica placed", "replica running"},
      {"app state update", "replica running", "RUNNING"},
      {"deploy -> RUNNING", "deploy requested", "RUNNING"}};
  std::map<std::string, Duration> out;
  for (const auto& [phase, from, to] : pairs)
    if (at.count(from) && at.count(to) && at[to] >= at[from]) out[phase] = at[to] - at[from];
  return out;
}

std::map<std::string, Duration> run_phases(const std::vector<TraceEvent>& ev) {
  std::map<std::string, Duration> out;
  auto span = [&](const std::string& name, TraceKind from, TraceKind to) {
    std::size_t i = 0;
    const TraceEvent* a = first_after(ev, 0, 0, [&](const TraceEvent& x) { return x.kind == from; }, &i);
    if (!a) return;
    if (const TraceEvent* b = first_after(ev, i, a->t, [&](const TraceEvent& x) { return x.kind == to; }))
      out[name] = b->t - a->t;
  };
  span("shutdown", TraceKind::shutdown_started, TraceKind::shutdown_done);
  span("call -> answer", TraceKind::call_sent, TraceKind::call_result);
  span("graceful stop", TraceKind::graceful_stop_started, TraceKind::graceful_stop_done);
  span("scale-down -> stop done", TraceKind::scale_down, TraceKind::graceful_stop_done);
  return out;
}

std::vector<std::string> apps_in(const std::vector<TraceEvent>& ev) {
  std::vector<std::string> apps;
  for (const auto& e : ev)
    if (e.kind == TraceKind::deploy_requested) {
      const std::string id = e.fields.value("app", "");
      if (std::find(apps.begin(), apps.end(), id) == apps.end()) apps.push_back(id);
    }
  return apps;
}

}  // namespace

std::vector<PhaseRow> phase_durations(const std::vector<TraceEvent>& a, const std::vector<TraceEvent>& b) {
  std::vector<PhaseRow> rows;
  auto merge = [&](const std::string& scope, const std::map<std::string, Duration>& pa,
                   const std::map<std::string, Duration>& pb, const std::vector<std::string>& order) {
    for (const auto& name : order) {
      if (!pa.count(name) && !pb.count(name)) continue;
      PhaseRow r{scope, name, std::nullopt, std::nullopt};
      if (pa.count(name)) r.a = pa.at(name);
      if (pb.count(name)) r.b = pb.at(name);
      rows.push_back(r);
    }
  };
  std::vector<std::string> apps = apps_in(a);
  for (const auto& x : apps_in(b))
    if (std::find(apps.begin(), apps.end(), x) == apps.end()) apps.push_back(x);
  const std::vector<std::string> app_order = {"until the scale-up tick", "sbatch", "SLURM queue wait",
                                              "node boot + registration", "introspection + admission",
                                              "placement", "runtime env + replica init", "app state update",
                                              "deploy -> RUNNING"};
  for (const auto& app : apps) merge(app, app_phases(a, app), app_phases(b, app), app_order);
  merge("run", run_phases(a), run_phases(b), {"call -> answer", "scale-down -> stop done", "graceful stop", "shutdown"});
  return rows;
}

namespace {

// Serving apps' request figures (serve_summary), side by side: rows for the
// apps of trace a, in its order.
void serve_rows(const std::vector<TraceEvent>& a, const std::vector<TraceEvent>& b, std::vector<PhaseRow>& rows) {
  auto summary = [](const std::vector<TraceEvent>& ev, const std::string& app) -> const TraceEvent* {
    for (const auto& e : ev)
      if (e.kind == TraceKind::serve_summary && e.fields.contains("app") && e["app"] == app) return &e;
    return nullptr;
  };
  auto field = [](const TraceEvent* e, const char* key) -> std::optional<Duration> {
    if (!e || !e->fields.contains(key) || !(*e)[key].is_number_integer()) return std::nullopt;
    return (*e)[key].get<Duration>();
  };
  for (const auto& e : a) {
    if (e.kind != TraceKind::serve_summary || !e.fields.contains("app") || !e["app"].is_string()) continue;
    const std::string app = e["app"].get<std::string>();
    const TraceEvent* other = summary(b, app);
    for (const auto& [key, label] : {std::pair{"wait_mean_us", "request wait (mean)"},
                                     {"p50_us", "request latency p50"},
                                     {"p95_us", "request latency p95"},
                                     {"p99_us", "request latency p99"}})
      rows.push_back(PhaseRow{app, label, field(&e, key), field(other, key)});
  }
}

}  // namespace

TraceDiff diff_traces(const std::vector<TraceEvent>& a, const std::vector<TraceEvent>& b) {
  TraceDiff d;
  d.phases = phase_durations(a, b);
  serve_rows(a, b, d.phases);
  std::vector<const TraceEvent*> fa, fb;
  for (const auto& e : a) if (!world_specific_kind(e.kind)) fa.push_back(&e);
  for (const auto& e : b) if (!world_specific_kind(e.kind)) fb.push_back(&e);
  const std::size_t n = std::min(fa.size(), fb.size());
  for (std::size_t i = 0; i < n; ++i)
    if (fa[i]->kind != fb[i]->kind) {
      d.divergence = Divergence{i, *fa[i], *fb[i]};
      d.compared = i;
      return d;
    }
  d.compared = n;
  if (fa.size() != fb.size()) {
    Divergence v;
    v.index = n;
    if (n < fa.size()) v.a = *fa[n];
    if (n < fb.size()) v.b = *fb[n];
    d.divergence = v;
  }
  return d;
}

void print_trace_diff(const TraceDiff& d, const std::string& label_a, const std::string& label_b, std::ostream& out) {
  auto cell = [](const std::optional<Duration>& x) { return x ? format_seconds(*x) + " s" : std::string("-"); };
  out << std::left << std::setw(12) << "scope" << std::setw(30) << "phase" << std::setw(16) << label_a
      << std::setw(16) << label_b << "difference\n";
  for (const auto& r : d.phases) {
    std::string diff = "-";
    if (r.a && r.b) {
      diff = (*r.b >= *r.a ? "+" : "") + format_seconds(*r.b - *r.a) + " s";
      if (*r.a > 0) diff += " (" + format_number(std::round(1000.0 * (*r.b - *r.a) / *r.a) / 10.0) + " %)";
    }
    out << std::left << std::setw(12) << r.scope << std::setw(30) << r.phase << std::setw(16) << cell(r.a)
        << std::setw(16) << cell(r.b) << diff << "\n";
  }
  out << "\n";
  if (!d.divergence) {
    out << "event kinds: the same " << d.compared << " events in the same order\n";
    return;
  }
  const auto& v = *d.divergence;
  out << "event kinds: the first " << v.index << " agree; they diverge at event " << v.index + 1 << ":\n";
  auto show = [&](const std::string& label, const std::optional<TraceEvent>& e) {
    out << "  " << label << ": " << (e ? format_seconds(e->t) + " s " + std::string(name(e->kind)) + " " + e->fields.dump() : "(trace ended)")
        << "\n";
  };
  show(label_a, v.a);
  show(label_b, v.b);
}

}  // namespace vramsim
