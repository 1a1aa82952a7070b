#include "runner/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <memory>
#include <sstream>

#include "engine/event_loop.hpp"
#include "engine/format.hpp"
#include "engine/output_file.hpp"
#include "models/status.hpp"

namespace vramsim {

bool RunResult::all_held() const {
  return std::all_of(expectations.begin(), expectations.end(), [](const auto& e) { return e.held; });
}

namespace {

std::string reservation_shape(const AppRecord& a) {
  if (!a.sizing.error.empty()) return "error";
  if (a.sizing.branch.empty()) return "-";
  if (a.sizing.num_gpus == 0) return "no GPU";
  std::string s = format_number(a.sizing.num_gpus) + " GPU";
  if (a.sizing.vram_mb) s += " + " + std::to_string(*a.sizing.vram_mb) + " MB VRAM_MB";
  return s;
}

bool json_matches(const Json& want, const Json& got) {
  if (want.is_number() && got.is_number())
    return std::fabs(want.get<double>() - got.get<double>()) <= 1e-9 * std::max(1.0, std::fabs(want.get<double>()));
  if (want.is_object() && got.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it)
      if (!got.contains(it.key()) || !json_matches(it.value(), got[it.key()])) return false;
    return true;
  }
  return want == got;
}

// "nodes.node-1.used_vram_mb" -> the value in a status document.
const Json* lookup_path(const Json& doc, const std::string& path) {
  const Json* cur = &doc;
  std::stringstream ss(path);
  std::string part;
  while (std::getline(ss, part, '.')) {
    if (!cur->is_object() || !cur->contains(part)) return nullptr;
    cur = &(*cur)[part];
  }
  return cur;
}

struct World {
  World(const Scenario& sc, std::uint64_t seed, PolicySet policies)
      : rng(seed),
        backend(loop, rng, trace, sc.slurm, policies.advertisement),
        control(loop, backend, cluster, trace, rng, std::move(policies), sc.control) {}
  EventLoop loop;
  RandomStreams rng;
  TraceRecorder trace;
  ClusterState cluster;
  SimSlurmBackend backend;
  ControlPlane control;
};

void add_head(World& w, const Scenario& sc) {
  NodeSpec head;
  head.ip = sc.head.ip;
  head.head = true;
  head.resources.set(kCPU, sc.head.cpus);
  if (sc.head.memory_gb > 0) head.resources.set(kMemory, static_cast<double>(sc.head.memory_gb) * kGiB);
  if (sc.head.gpus > 0) {
    const auto& info = gpu_catalogue().at(sc.head.gpu);
    NodeGpuFacts facts;
    facts.gpus = sc.head.gpus;
    facts.memory_total_mb.assign(static_cast<std::size_t>(sc.head.gpus), info.memory_mb);
    for (int g = 0; g < sc.head.gpus; ++g)
      head.devices.push_back(GpuDevice{g, info.device_name, info.memory_mb, 0, 0, std::nullopt, 0});
    head.accelerator_type = info.accelerator_type;
    if (auto v = head_vram_mb(facts)) head.resources.set(kVramMB, static_cast<double>(*v));
  }
  const Json resources = head.resources.to_json();
  NodeId id = w.cluster.add_node(std::move(head), 0);
  w.trace.record(0, "node_registered", {{"node", id}, {"job", ""}, {"ip", sc.head.ip}, {"resources", resources}});
}

ExpectationResult check_app(const Expectation& ex, const RunResult&, const World& w,
                            const std::vector<TraceEvent>& events) {
  const Json& e = ex.spec;
  ExpectationResult r;
  r.path = ex.json_path;
  const std::string app_id = e["app"].get<std::string>();
  const AppRecord* app = w.control.app(app_id);
  std::vector<std::string> parts, fails;
  auto first_event = [&](const std::string& kind) -> const TraceEvent* {
    for (const auto& ev : events)
      if (ev.kind == kind && ev["app"] == app_id) return &ev;
    return nullptr;
  };
  if (e.contains("state")) {
    const std::string want = e["state"].get<std::string>();
    if (e.contains("within")) {
      const Duration within = *parse_duration(e["within"].is_string() ? e["within"].get<std::string>()
                                                                      : format_duration(seconds(e["within"].get<double>())));
      parts.push_back(want + " within " + format_duration(within));
      const TraceEvent* req = first_event("deploy_requested");
      std::optional<SimTime> reached;
      for (const auto& ev : events)
        if (ev.kind == "app_state" && ev["app"] == app_id && ev["to"] == want) { reached = ev.t; break; }
      if (!req) fails.push_back("the app was never deployed");
      else if (!reached) fails.push_back("never reached " + want + " (final state " +
                                         (app ? name(app->life.state()) : "unknown") + ")");
      else if (*reached - req->t > within)
        fails.push_back("reached " + want + " after " + format_seconds(*reached - req->t) + " s");
    } else {
      parts.push_back("final state " + want);
      const std::string got = app ? name(app->life.state()) : "NOT_STARTED";
      if (got != want) fails.push_back("final state is " + got);
    }
  }
  if (e.contains("admitted")) {
    const bool want = e["admitted"].get<bool>();
    parts.push_back(want ? "admitted" : "rejected");
    const TraceEvent* adm = first_event("admission");
    if (!adm) fails.push_back("no admission decision was made");
    else if ((*adm)["admitted"].get<bool>() != want)
      fails.push_back(want ? "rejected: " + (*adm)["message"].get<std::string>() : "admitted (" + (*adm)["reason"].get<std::string>() + ")");
  }
  if (e.contains("message") || e.contains("message_contains")) {
    std::string msg;
    if (const TraceEvent* adm = first_event("admission")) msg = (*adm)["message"].get<std::string>();
    if (msg.empty())
      if (const TraceEvent* sz = first_event("sizing")) msg = (*sz)["error"].get<std::string>();
    if (e.contains("message")) {
      parts.push_back("message \"" + e["message"].get<std::string>() + "\"");
      if (msg != e["message"].get<std::string>()) fails.push_back("message was \"" + msg + "\"");
    } else {
      parts.push_back("message containing \"" + e["message_contains"].get<std::string>() + "\"");
      if (msg.find(e["message_contains"].get<std::string>()) == std::string::npos)
        fails.push_back("message was \"" + msg + "\"");
    }
  }
  if (e.contains("reservation")) {
    parts.push_back("reservation " + e["reservation"].dump());
    const TraceEvent* sz = first_event("sizing");
    if (!sz) fails.push_back("the app was never sized");
    else if (!json_matches(e["reservation"], sz->fields))
      fails.push_back("sized as num_gpus=" + (*sz)["num_gpus"].dump() + ", vram_mb=" + (*sz)["vram_mb"].dump() +
                      " (branch " + (*sz)["branch"].get<std::string>() + ")");
  }
  r.description = "app " + app_id + ": ";
  for (std::size_t i = 0; i < parts.size(); ++i) r.description += (i ? ", " : "") + parts[i];
  r.held = fails.empty();
  for (std::size_t i = 0; i < fails.size(); ++i) r.why += (i ? "; " : "") + fails[i];
  return r;
}

ExpectationResult check_event(const Expectation& ex, const std::vector<TraceEvent>& events) {
  const Json& e = ex.spec;
  ExpectationResult r;
  r.path = ex.json_path;
  const std::string kind = e["event"].get<std::string>();
  const Json match = e.value("match", Json::object());
  std::optional<Duration> within;
  if (e.contains("within"))
    within = e["within"].is_string() ? *parse_duration(e["within"].get<std::string>()) : seconds(e["within"].get<double>());
  long n = 0;
  for (const auto& ev : events)
    if (ev.kind == kind && json_matches(match, ev.fields) && (!within || ev.t <= *within)) ++n;
  r.description = "event " + kind + (match.empty() ? "" : " matching " + match.dump()) +
                  (within ? " within " + format_duration(*within) : "");
  long lo = 1, hi = LONG_MAX;
  if (e.contains("count")) lo = hi = e["count"].get<long>();
  if (e.contains("min_count")) lo = e["min_count"].get<long>();
  if (e.contains("max_count")) { hi = e["max_count"].get<long>(); if (!e.contains("min_count") && !e.contains("count")) lo = 0; }
  if (lo == hi) r.description += ", exactly " + std::to_string(lo);
  else r.description += ", " + std::to_string(lo) + (hi == LONG_MAX ? "+" : ".." + std::to_string(hi));
  r.held = n >= lo && n <= hi;
  r.why = "seen " + std::to_string(n) + " time(s)";
  return r;
}

ExpectationResult check_metric(const Expectation& ex, const RunMetrics& m) {
  const Json& e = ex.spec;
  ExpectationResult r;
  r.path = ex.json_path;
  const std::string name = e["metric"].get<std::string>();
  const std::map<std::string, double> values = {
      {"jobs_submitted", m.jobs_submitted}, {"jobs_cancelled", m.jobs_cancelled}, {"jobs_left", m.jobs_left},
      {"jobs_timeout", m.jobs_timeout}, {"orphaned_job_seconds", m.orphaned_job_seconds},
      {"scale_ups", m.scale_ups}, {"scale_downs", m.scale_downs}, {"device_overbookings", m.device_overbookings}};
  const double v = values.at(name);
  r.description = "metric " + name;
  r.held = true;
  if (e.contains("equals")) { r.description += " == " + e["equals"].dump(); r.held = r.held && std::fabs(v - e["equals"].get<double>()) < 1e-9; }
  if (e.contains("min")) { r.description += " >= " + e["min"].dump(); r.held = r.held && v >= e["min"].get<double>(); }
  if (e.contains("max")) { r.description += " <= " + e["max"].dump(); r.held = r.held && v <= e["max"].get<double>(); }
  r.why = "was " + format_number(v);
  return r;
}

}  // namespace

RunResult run_scenario(const Scenario& sc, const RunOptions& opt) {
  const std::uint64_t seed = opt.seed.value_or(sc.seed);
  PolicySet policies = parse_policy_spec(opt.policies.value_or(sc.policies));
  RunResult result;
  result.scenario = sc.name.empty() ? sc.file : sc.name;
  result.seed = seed;
  result.policies = policies.label;
  Json policy_names = Json::object();
  for (const auto& [m, v] : policies.names) policy_names[m] = v;

  World w(sc, seed, std::move(policies));
  auto memory = std::make_shared<MemorySink>();
  w.trace.add_sink(memory);
  if (!opt.trace_path.empty()) w.trace.add_sink(std::make_shared<JsonLinesSink>(opt.trace_path));
  w.trace.record(0, "run_started", {{"scenario", result.scenario}, {"seed", seed}, {"policies", policy_names}});

  add_head(w, sc);
  for (int i = 0; i < sc.initial_workers; ++i) {
    w.backend.start_warm_worker(sc.initial_worker_size);
  }
  w.control.start();

  const StatusOptions status_opts{sc.control.slurm_mode, 30 * kSecond};
  Json snapshots = Json::array();
  auto take_status = [&](const std::string& source, const Json& expect, const std::string& path) {
    Json state = get_cluster_state(w.cluster, w.loop.now(), status_opts);
    auto lines = format_status_lines(state);
    result.status_lines.push_back("status at " + format_seconds(w.loop.now()) + " s (" + source + "): " +
                                  vram_summary(state));
    for (const auto& l : lines) result.status_lines.push_back(l);
    Json line_json = Json::array();
    for (const auto& l : lines) line_json.push_back(l);
    w.trace.record(w.loop.now(), "status", {{"source", source}, {"lines", line_json}});
    snapshots.push_back({{"t", w.loop.now()}, {"source", source}, {"state", state}});
    for (auto it = expect.begin(); it != expect.end(); ++it) {
      ExpectationResult r;
      r.path = path + ".expect." + it.key();
      r.description = "status " + it.key() + " == " + it.value().dump() + " at " + format_seconds(w.loop.now()) + " s";
      const Json* got = lookup_path(state, it.key());
      r.held = got && json_matches(it.value(), *got);
      r.why = got ? "was " + got->dump() : "no such field";
      result.expectations.push_back(r);
    }
  };

  for (const auto& a : sc.actions) {
    w.loop.at(a.at, [&w, &sc, &a, &take_status] {
      if (a.kind == "deploy") {
        const AppSpec* spec = nullptr;
        for (const auto& s : sc.apps)
          if (s.id == a.app) spec = &s;
        w.control.deploy(a.app_override ? *a.app_override : *spec);
      } else if (a.kind == "stop") {
        w.control.stop_app(a.app);
      } else if (a.kind == "delete") {
        w.control.delete_app(a.app);
      } else if (a.kind == "shutdown") {
        w.control.shutdown();
      } else if (a.kind == "status") {
        take_status(a.json_path, a.expect, a.json_path);
      }
    });
  }
  for (Duration t : opt.status_at)
    w.loop.at(t, [&take_status] { take_status("--status-at", Json::object(), "--status-at"); });
  std::unique_ptr<OutputFile> csv;
  Executor::Periodic timeline;
  if (opt.status_every) {
    csv = std::make_unique<OutputFile>(opt.status_csv_path);
    csv->write(status_csv_header() + "\n");
    timeline = w.loop.every(*opt.status_every, [&] {
      for (const auto& row : status_csv_rows(get_cluster_state(w.cluster, w.loop.now(), status_opts), w.loop.now()))
        csv->write(row + "\n");
    }, 0);
  }

  w.loop.run(sc.horizon);
  timeline.cancel();
  if (csv) csv->close();
  const SimTime end = w.loop.now();
  w.trace.record(end, "run_ended", {{"events", w.loop.events_run()}});
  w.trace.close();

  // Metrics.
  RunMetrics& m = result.metrics;
  const auto shutdown_at = w.control.shutdown_done_at();
  m.end_time = end;
  m.shut_down = shutdown_at.has_value();
  m.events = w.loop.events_run();
  for (const auto& ev : memory->events) {
    if (ev.kind == "job_submitted" && !ev.fields.contains("warm")) ++m.jobs_submitted;
    if (ev.kind == "scale_up") ++m.scale_ups;
    if (ev.kind == "scale_down") ++m.scale_downs;
    if (ev.kind == "device_vram_overbooked") ++m.device_overbookings;
    if (ev.kind == "shutdown_done") m.jobs_left = static_cast<int>(ev["jobs_left"].size());
  }
  for (const auto& [id, j] : w.backend.jobs()) {
    if (j.life.state() == JobState::Cancelled) ++m.jobs_cancelled;
    if (j.life.state() == JobState::Timeout) ++m.jobs_timeout;
    if (!shutdown_at && !is_terminal(j.life.state())) ++m.jobs_left;
    if (shutdown_at && j.started) {
      const SimTime from = std::max(*j.started, *shutdown_at);
      const SimTime to = j.ended.value_or(end);
      if (to > from) m.orphaned_job_seconds += to_seconds(to - from);
    }
  }

  // Apps.
  for (const auto& [id, app] : w.control.apps()) {
    AppOutcome o;
    o.id = id;
    o.admitted = !app.admitted ? "pending" : (*app.admitted ? "admitted" : "rejected");
    o.final_state = name(app.life.state());
    for (const auto& ev : memory->events)
      if (ev.kind == "app_state" && ev["app"] == id && ev["to"] == "RUNNING") {
        for (const auto& rq : memory->events)
          if (rq.kind == "deploy_requested" && rq["app"] == id) { o.time_to_running = ev.t - rq.t; break; }
        break;
      }
    o.reservation = reservation_shape(app);
    o.message = app.message;
    result.apps.push_back(o);
  }

  if (opt.critical_path)
    for (const auto& a : result.apps)
      if (auto p = critical_path(memory->events, a.id)) result.critical_paths.push_back(*p);

  for (const auto& ex : sc.expectations) {
    if (ex.spec.contains("app")) result.expectations.push_back(check_app(ex, result, w, memory->events));
    else if (ex.spec.contains("event")) result.expectations.push_back(check_event(ex, memory->events));
    else result.expectations.push_back(check_metric(ex, m));
  }
  if (!opt.status_json_path.empty()) {
    OutputFile out(opt.status_json_path);
    out.write(snapshots.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
    out.close();
  }
  return result;
}

void print_summary(const RunResult& r, std::ostream& out) {
  out << "scenario " << r.scenario << "  policies " << r.policies << "  seed " << r.seed << "\n\n";
  out << std::left << std::setw(18) << "app" << std::setw(10) << "admitted" << std::setw(15) << "state"
      << std::setw(12) << "to RUNNING" << "reservation\n";
  for (const auto& a : r.apps) {
    out << std::left << std::setw(18) << a.id << std::setw(10) << a.admitted << std::setw(15) << a.final_state
        << std::setw(12) << (a.time_to_running ? format_seconds(*a.time_to_running) + "s" : "-") << a.reservation
        << "\n";
    if (!a.message.empty()) out << "    " << a.message << "\n";
  }
  const auto& m = r.metrics;
  out << "\njobs submitted " << m.jobs_submitted << ", cancelled " << m.jobs_cancelled << ", timed out "
      << m.jobs_timeout << "; scale-ups " << m.scale_ups << ", scale-downs " << m.scale_downs << "\n";
  if (m.shut_down)
    out << "after shutdown: " << m.jobs_left << " job(s) left behind, orphaned allocation "
        << format_number(std::round(m.orphaned_job_seconds)) << " job-s\n";
  else
    out << "no shutdown: " << m.jobs_left << " job(s) still queued or running at " << format_seconds(m.end_time)
        << " s\n";
  if (!r.status_lines.empty()) {
    out << "\n";
    for (const auto& l : r.status_lines) out << l << "\n";
  }
  for (const auto& p : r.critical_paths) {
    out << "\n";
    print_critical_path(p, out);
  }
  if (!r.expectations.empty()) {
    out << "\nexpectations:\n";
    for (const auto& e : r.expectations)
      out << "  " << (e.held ? "held  " : "FAILED") << " " << e.path << " " << e.description
          << (e.held ? "" : ": " + e.why) << "\n";
  }
}

void print_comparison(const std::vector<RunResult>& runs, std::ostream& out) {
  if (runs.empty()) return;
  const int w0 = 42, w = 28;
  out << "scenario " << runs.front().scenario << "  seed " << runs.front().seed << "\n\n";
  out << std::left << std::setw(w0) << "";
  for (const auto& r : runs) out << std::setw(w) << r.policies;
  out << "\n";
  auto row = [&](const std::string& label, auto fn) {
    out << std::left << std::setw(w0) << label;
    for (const auto& r : runs) out << std::setw(w) << fn(r);
    out << "\n";
  };
  for (std::size_t i = 0; i < runs.front().apps.size(); ++i) {
    const std::string id = runs.front().apps[i].id;
    auto get = [&](const RunResult& r) -> const AppOutcome* {
      for (const auto& a : r.apps) if (a.id == id) return &a;
      return nullptr;
    };
    row(id + ": admitted", [&](const RunResult& r) { auto a = get(r); return a ? a->admitted : "-"; });
    row(id + ": time to RUNNING", [&](const RunResult& r) {
      auto a = get(r);
      return a && a->time_to_running ? format_seconds(*a->time_to_running) + "s" : std::string("never");
    });
    row(id + ": reservation", [&](const RunResult& r) { auto a = get(r); return a ? a->reservation : "-"; });
    row(id + ": final state", [&](const RunResult& r) { auto a = get(r); return a ? a->final_state : "-"; });
  }
  row("jobs submitted", [](const RunResult& r) { return std::to_string(r.metrics.jobs_submitted); });
  row("jobs cancelled", [](const RunResult& r) { return std::to_string(r.metrics.jobs_cancelled); });
  row("jobs left (after shutdown, else at end)", [](const RunResult& r) { return std::to_string(r.metrics.jobs_left); });
  row("orphaned allocation (job-s)", [](const RunResult& r) { return format_number(std::round(r.metrics.orphaned_job_seconds)); });
  row("expectations held", [](const RunResult& r) {
    long held = std::count_if(r.expectations.begin(), r.expectations.end(), [](const auto& e) { return e.held; });
    return std::to_string(held) + "/" + std::to_string(r.expectations.size());
  });
}

}  // namespace vramsim
