#include "runner/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "engine/event_loop.hpp"
#include "engine/format.hpp"
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

}  // namespace

void add_head_node(ClusterState& cluster, TraceRecorder& trace, const Scenario& sc) {
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
  NodeId id = cluster.add_node(std::move(head), 0);
  trace.record(0, "node_registered", {{"node", id}, {"job", ""}, {"ip", sc.head.ip}, {"resources", resources}});
}

namespace {

// Watches every trace event as it is recorded: the invariants of the
// expectations, and the time registered workers spend with nothing placed.
class RunWatcher final : public TraceSink {
 public:
  RunWatcher(const World& w, const std::vector<const Expectation*>& invariants) : w_(w) {
    for (const Expectation* e : invariants) checks_.push_back(Check{e, std::nullopt, 0});
  }
  struct Check {
    const Expectation* ex = nullptr;
    std::optional<std::string> violation;  // the first one
    std::int64_t worst = 0;                // max_worker_jobs: most jobs seen
  };
  void write(const TraceEvent& ev) override {
    idle_node_seconds_ += to_seconds(ev.t - last_t_) * static_cast<double>(idle_nodes_);
    last_t_ = ev.t;
    idle_nodes_ = 0;
    for (const Node* n : w_.cluster.alive_nodes())
      if (!n->spec.head && n->available == n->total()) ++idle_nodes_;
    if (ev.kind == "shutdown_done") shutdown_done_ = true;
    for (auto& c : checks_) check(c, ev);
  }
  // The end of the run counts as one more event.
  void finish(SimTime end) { write(TraceEvent{end, "run_end", Json::object()}); }
  const std::vector<Check>& checks() const { return checks_; }
  bool shutdown_done() const { return shutdown_done_; }
  double idle_node_seconds() const { return idle_node_seconds_; }

 private:
  void check(Check& c, const TraceEvent& ev) {
    const std::string at = " at " + format_seconds(ev.t) + " s (" + ev.kind + ")";
    auto violate = [&](const std::string& what) { if (!c.violation) c.violation = what + at; };
    if (c.ex->invariant == "max_worker_jobs") {
      std::int64_t live = 0;
      for (const auto& [id, j] : w_.backend.jobs())
        if (!is_terminal(j.life.state())) ++live;
      c.worst = std::max(c.worst, live);
      if (static_cast<double>(live) > *c.ex->max) violate(std::to_string(live) + " worker jobs");
    } else if (c.ex->invariant == "device_vram_within_total") {
      for (const Node* n : w_.cluster.alive_nodes())
        for (const auto& d : n->devices())
          if (d.vram_booked_mb > d.total_vram_mb)
            violate(n->id + " device " + std::to_string(d.index) + " booked " + std::to_string(d.vram_booked_mb) +
                    "/" + std::to_string(d.total_vram_mb) + " MB");
    } else if (c.ex->invariant == "no_jobs_after_shutdown" && shutdown_done_) {
      std::string left;
      for (const auto& [id, j] : w_.backend.jobs())
        if (!is_terminal(j.life.state())) left += (left.empty() ? "" : ", ") + id;
      if (!left.empty()) violate("job(s) " + left + " still queued or running after shutdown");
    }
  }
  const World& w_;
  std::vector<Check> checks_;
  SimTime last_t_ = 0;
  std::size_t idle_nodes_ = 0;
  double idle_node_seconds_ = 0;
  bool shutdown_done_ = false;
};

ExpectationResult invariant_result(const RunWatcher::Check& c, const RunWatcher& watcher) {
  ExpectationResult r;
  const Expectation& e = *c.ex;
  r.path = e.json_path;
  r.name = e.name;
  if (e.invariant == "max_worker_jobs") {
    r.description = "at every event, at most " + format_number(*e.max) + " worker job(s) queued or running";
    r.why = c.violation ? *c.violation : "at most " + std::to_string(c.worst) + " seen";
  } else if (e.invariant == "device_vram_within_total") {
    r.description = "at every event, VRAM booked on each device <= the device's VRAM";
    r.why = c.violation.value_or("");
  } else {
    r.description = "no worker job queued or running after shutdown";
    r.why = c.violation.value_or(watcher.shutdown_done() ? "" : "the run never completed a shutdown");
  }
  r.held = !c.violation && (e.invariant != "no_jobs_after_shutdown" || watcher.shutdown_done());
  return r;
}

ExpectationResult check_app(const Expectation& e, const World& w, const std::vector<TraceEvent>& events) {
  ExpectationResult r;
  r.path = e.json_path;
  r.name = e.name;
  const std::string& app_id = e.app;
  const AppRecord* app = w.control.app(app_id);
  std::vector<std::string> parts, fails;
  auto first_event = [&](const std::string& kind) -> const TraceEvent* {
    for (const auto& ev : events)
      if (ev.kind == kind && ev["app"] == app_id) return &ev;
    return nullptr;
  };
  if (e.state) {
    const std::string& want = *e.state;
    if (e.within) {
      parts.push_back(want + " within " + format_duration(*e.within));
      const TraceEvent* req = first_event("deploy_requested");
      std::optional<SimTime> reached;
      for (const auto& ev : events)
        if (ev.kind == "app_state" && ev["app"] == app_id && ev["to"] == want) { reached = ev.t; break; }
      if (!req) fails.push_back("the app was never deployed");
      else if (!reached) fails.push_back("never reached " + want + " (final state " +
                                         (app ? name(app->life.state()) : "unknown") + ")");
      else if (*reached - req->t > *e.within)
        fails.push_back("reached " + want + " after " + format_seconds(*reached - req->t) + " s");
    }
    if (e.at_end) {
      parts.push_back("final state " + want);
      const std::string got = app ? name(app->life.state()) : "NOT_STARTED";
      if (got != want) fails.push_back("final state is " + got);
    }
  }
  if (e.admitted) {
    const bool want = *e.admitted;
    parts.push_back(want ? "admitted" : "rejected");
    const TraceEvent* adm = first_event("admission");
    if (!adm) fails.push_back("no admission decision was made");
    else if ((*adm)["admitted"].get<bool>() != want)
      fails.push_back(want ? "rejected: " + (*adm)["message"].get<std::string>() : "admitted (" + (*adm)["reason"].get<std::string>() + ")");
  }
  if (e.message || e.message_contains) {
    std::string msg;
    if (const TraceEvent* adm = first_event("admission")) msg = (*adm)["message"].get<std::string>();
    if (msg.empty())
      if (const TraceEvent* sz = first_event("sizing")) msg = (*sz)["error"].get<std::string>();
    if (e.message) {
      parts.push_back("message \"" + *e.message + "\"");
      if (msg != *e.message) fails.push_back("message was \"" + msg + "\"");
    } else {
      parts.push_back("message containing \"" + *e.message_contains + "\"");
      if (msg.find(*e.message_contains) == std::string::npos) fails.push_back("message was \"" + msg + "\"");
    }
  }
  if (e.reservation) {
    parts.push_back("reservation " + e.reservation->dump());
    const TraceEvent* sz = first_event("sizing");
    if (!sz) fails.push_back("the app was never sized");
    else if (!json_matches(*e.reservation, sz->fields))
      fails.push_back("sized as num_gpus=" + (*sz)["num_gpus"].dump() + ", vram_mb=" + (*sz)["vram_mb"].dump() +
                      " (branch " + (*sz)["branch"].get<std::string>() + ")");
  }
  r.description = "app " + app_id + ": ";
  for (std::size_t i = 0; i < parts.size(); ++i) r.description += (i ? ", " : "") + parts[i];
  r.held = fails.empty();
  for (std::size_t i = 0; i < fails.size(); ++i) r.why += (i ? "; " : "") + fails[i];
  return r;
}

std::string describe(const EventPattern& p) {
  return p.event + (p.match.empty() ? "" : " matching " + p.match.dump());
}

bool matches(const EventPattern& p, const TraceEvent& ev) {
  return ev.kind == p.event && json_matches(p.match, ev.fields);
}

ExpectationResult check_event(const Expectation& e, const std::vector<TraceEvent>& events) {
  ExpectationResult r;
  r.path = e.json_path;
  r.name = e.name;
  r.description = "event " + describe(e.pattern);
  // The window: trace positions [from, to) and times up to `until`.
  std::size_t from = 0, to = events.size();
  std::optional<SimTime> until = e.within;
  std::string anchor_missing;
  if (e.after) {
    r.description += (e.within ? " within " + format_duration(*e.within) : std::string()) + " after the first " +
                     describe(*e.after);
    auto it = std::find_if(events.begin(), events.end(), [&](const TraceEvent& ev) { return matches(*e.after, ev); });
    if (it == events.end()) {
      anchor_missing = "no " + describe(*e.after) + " event";
      from = to;
    } else {
      from = static_cast<std::size_t>(it - events.begin()) + 1;
      if (e.within) until = it->t + *e.within;
    }
  } else if (e.before) {
    r.description += " before the first " + describe(*e.before);
    auto it = std::find_if(events.begin(), events.end(), [&](const TraceEvent& ev) { return matches(*e.before, ev); });
    to = static_cast<std::size_t>(it - events.begin());
  } else if (e.within) {
    r.description += " within " + format_duration(*e.within);
  }
  std::int64_t n = 0;
  std::optional<SimTime> first;
  for (std::size_t i = from; i < to; ++i)
    if (matches(e.pattern, events[i]) && (!until || events[i].t <= *until)) {
      ++n;
      if (!first) first = events[i].t;
    }
  const std::int64_t lo = e.min_count, hi = e.max_count;
  if (lo == hi) r.description += ", exactly " + std::to_string(lo);
  else r.description += ", " + std::to_string(lo) + (hi == INT64_MAX ? "+" : ".." + std::to_string(hi));
  r.held = n >= lo && n <= hi;
  r.why = "seen " + std::to_string(n) + " time(s)" + (first ? ", first at " + format_seconds(*first) + " s" : "");
  if (!anchor_missing.empty()) r.why += " (" + anchor_missing + ")";
  return r;
}

ExpectationResult check_metric(const Expectation& e, const RunMetrics& m) {
  ExpectationResult r;
  r.path = e.json_path;
  r.name = e.name;
  const std::map<std::string, double> values = {
      {"jobs_submitted", m.jobs_submitted}, {"jobs_cancelled", m.jobs_cancelled}, {"jobs_left", m.jobs_left},
      {"jobs_timeout", m.jobs_timeout}, {"orphaned_job_seconds", m.orphaned_job_seconds},
      {"scale_ups", m.scale_ups}, {"scale_downs", m.scale_downs}, {"device_overbookings", m.device_overbookings},
      {"sbatch_refusals", m.sbatch_refusals}, {"pending_forever", static_cast<double>(m.pending_forever)}};
  const double v = values.at(e.metric);
  r.description = "metric " + e.metric;
  r.held = true;
  if (e.equals) { r.description += " == " + format_number(*e.equals); r.held = r.held && std::fabs(v - *e.equals) < 1e-9; }
  if (e.min) { r.description += " >= " + format_number(*e.min); r.held = r.held && v >= *e.min; }
  if (e.max) { r.description += " <= " + format_number(*e.max); r.held = r.held && v <= *e.max; }
  r.why = "was " + format_number(v);
  return r;
}

// Demands still pending at the end, and why: pending forever when no node
// that joined during the run could ever hold one (judged on its totals).
std::vector<UnplacedDemand> unplaced_demands(const World& w, const std::vector<TraceEvent>& events) {
  std::vector<const Node*> joined;
  for (const auto& ev : events)
    if (ev.kind == "node_registered")
      if (const Node* n = w.cluster.node(ev["node"].get<std::string>())) joined.push_back(n);
  // Refused worker jobs are why no bigger node ever joined.
  int refused = 0;
  std::string refusal;
  for (const auto& ev : events)
    if (ev.kind == "job_rejected" && refused++ == 0) refusal = ev["error"].get<std::string>();
  std::vector<UnplacedDemand> out;
  for (DemandKind kind : {DemandKind::Actor, DemandKind::Task})
    for (const Demand* d : w.cluster.pending(kind)) {
      UnplacedDemand u;
      u.label = d->label;
      u.app = d->owner;
      u.request = d->request.to_json();
      u.forever = std::none_of(joined.begin(), joined.end(),
                               [&](const Node* n) { return n->total().contains(d->request); });
      if (!u.forever) {
        u.reason = "pending at the end: a node that joined could hold it, none had room";
      } else {
        // The resource no node offers enough of, else the best node's shortfall.
        for (const auto& [k, amount] : d->request.amounts()) {
          double largest = 0;
          for (const Node* n : joined) largest = std::max(largest, n->total().get(k));
          if (to_double(amount) > largest) {
            u.reason = "pending forever: needs " + k + " " + format_number(to_double(amount)) +
                       (largest > 0 ? ", largest node offers " + format_number(largest) : ", no node offers " + k);
            break;
          }
        }
        if (u.reason.empty()) {
          // Each resource is somewhere, never all on one node: say what each lacks.
          std::string lacks;
          for (std::size_t i = 0; i < joined.size() && i < 3; ++i) {
            std::string missing;
            for (const auto& [k, amount] : d->request.amounts())
              if (to_double(amount) > joined[i]->total().get(k)) missing += (missing.empty() ? "" : ", ") + k;
            lacks += (i ? "; " : "") + joined[i]->id + " lacks " + missing;
          }
          if (joined.size() > 3) lacks += "; ...";
          u.reason = "pending forever: no node that joined offers all of it (" + lacks + ")";
        }
        if (refused > 0) u.reason += "; sbatch refused " + std::to_string(refused) + " submission(s): " + refusal;
      }
      out.push_back(std::move(u));
    }
  return out;
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
  std::vector<const Expectation*> invariants;
  for (const auto& ex : sc.expectations)
    if (ex.kind == Expectation::Kind::Invariant) invariants.push_back(&ex);
  auto watcher = std::make_shared<RunWatcher>(w, invariants);
  w.trace.add_sink(watcher);
  if (!opt.trace_path.empty()) w.trace.add_sink(std::make_shared<JsonLinesSink>(opt.trace_path));
  w.trace.record(0, "run_started", {{"scenario", result.scenario}, {"seed", seed}, {"policies", policy_names}});

  add_head_node(w.cluster, w.trace, sc);
  for (int i = 0; i < sc.initial_workers; ++i) {
    w.backend.start_warm_worker(sc.initial_worker_size);
  }
  w.control.start();

  const StatusOptions status_opts{sc.control.slurm_mode, 30 * kSecond, sc.control.slurm_mode};
  Json snapshots = Json::array();
  auto take_status = [&](const std::string& source, const Json& expect, const std::string& path) -> Json {
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
    return state;
  };
  // Status-line expectations look at a status taken at their time.
  std::map<const Expectation*, ExpectationResult> line_results;
  for (const auto& ex : sc.expectations) {
    if (ex.kind != Expectation::Kind::StatusLine) continue;
    w.loop.at(ex.at, [&w, &ex, &take_status, &line_results] {
      const Json state = take_status(ex.json_path, Json::object(), ex.json_path);
      ExpectationResult r;
      r.path = ex.json_path;
      r.name = ex.name;
      r.description = "status line of " + ex.node + " at " + format_seconds(ex.at) + " s contains \"" +
                      ex.contains + "\"";
      if (!state["nodes"].contains(ex.node)) {
        r.why = "no node " + ex.node + " in the status";
      } else {
        Json one = state;
        one["nodes"] = Json::object({{ex.node, state["nodes"][ex.node]}});
        const std::string line = format_status_lines(one).front();
        r.held = line.find(ex.contains) != std::string::npos;
        r.why = "line was \"" + line + "\"";
      }
      line_results[&ex] = r;
    });
  }

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
      } else if (a.kind == "call") {
        w.control.call_app(a.app, a.payload);
      }
    });
  }
  for (Duration t : opt.status_at)
    w.loop.at(t, [&take_status] { take_status("--status-at", Json::object(), "--status-at"); });
  std::ofstream csv;
  Executor::Periodic timeline;
  if (opt.status_every) {
    csv.open(opt.status_csv_path, std::ios::trunc);
    if (!csv) throw std::runtime_error("cannot open the status CSV for writing");
    csv << status_csv_header() << "\n";
    timeline = w.loop.every(*opt.status_every, [&] {
      for (const auto& row : status_csv_rows(get_cluster_state(w.cluster, w.loop.now(), status_opts), w.loop.now()))
        csv << row << "\n";
    }, 0);
  }

  w.loop.run(sc.horizon);
  timeline.cancel();
  const SimTime end = w.loop.now();
  // What never found a node, said in the trace before the run ends.
  result.unplaced = unplaced_demands(w, memory->events);
  for (const auto& u : result.unplaced)
    w.trace.record(end, "demand_unplaced", {{"label", u.label}, {"app", u.app}, {"request", u.request},
                                            {"forever", u.forever}, {"reason", u.reason}});
  w.trace.record(end, "run_ended", {{"events", w.loop.events_run()}});
  w.trace.flush();
  watcher->finish(end);

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
    if (ev.kind == "job_rejected" && m.sbatch_refusals++ == 0) m.sbatch_error = ev["error"].get<std::string>();
  }
  m.pending_forever = static_cast<std::size_t>(
      std::count_if(result.unplaced.begin(), result.unplaced.end(), [](const auto& u) { return u.forever; }));
  m.idle_node_seconds = watcher->idle_node_seconds();
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
    switch (ex.kind) {
      case Expectation::Kind::App: result.expectations.push_back(check_app(ex, w, memory->events)); break;
      case Expectation::Kind::Event: result.expectations.push_back(check_event(ex, memory->events)); break;
      case Expectation::Kind::Metric: result.expectations.push_back(check_metric(ex, m)); break;
      case Expectation::Kind::Invariant:
        for (const auto& c : watcher->checks())
          if (c.ex == &ex) result.expectations.push_back(invariant_result(c, *watcher));
        break;
      case Expectation::Kind::StatusLine: {
        auto it = line_results.find(&ex);
        if (it != line_results.end()) {
          result.expectations.push_back(it->second);
        } else {
          ExpectationResult r;
          r.path = ex.json_path;
          r.name = ex.name;
          r.description = "status line of " + ex.node + " at " + format_seconds(ex.at) + " s";
          r.why = "the run ended at " + format_seconds(end) + " s, before the status was due";
          result.expectations.push_back(r);
        }
        break;
      }
    }
  }
  if (!opt.status_json_path.empty()) {
    std::ofstream out(opt.status_json_path, std::ios::trunc);
    if (!out) throw std::runtime_error("cannot open '" + opt.status_json_path + "' for writing");
    out << snapshots.dump(2) << "\n";
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
  if (m.sbatch_refusals > 0)
    out << "sbatch refused " << m.sbatch_refusals << " submission(s): " << m.sbatch_error << "\n";
  for (const auto& u : r.unplaced) out << "unplaced " << u.label << " " << u.request.dump() << ": " << u.reason << "\n";
  if (!r.unplaced.empty() || m.sbatch_refusals > 0)
    out << "idle allocation held meanwhile: " << format_number(std::round(m.idle_node_seconds))
        << " node-s of registered workers with nothing placed\n";
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
      out << "  " << (e.held ? "held  " : "FAILED") << " " << e.path
          << (e.name.empty() ? "" : " [" + e.name + "]") << " " << e.description << (e.held ? "" : ": " + e.why)
          << "\n";
  }
}

void print_comparison(const std::vector<RunResult>& runs, std::ostream& out,
                      const std::vector<std::size_t>& required) {
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
  for (std::size_t i : required) {
    const RunResult& r = runs.at(i);
    for (const auto& e : r.expectations)
      if (!e.held)
        out << "FAILED (" << r.policies << ") " << e.path << (e.name.empty() ? "" : " [" + e.name + "]") << " "
            << e.description << ": " << e.why << "\n";
  }
}

}  // namespace vramsim
