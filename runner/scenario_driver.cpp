#include "runner/scenario_driver.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <fstream>
#include <sstream>

#include "engine/format.hpp"
#include "models/gpu_models.hpp"
#include "engine/output_file.hpp"
#include "analysis/trace_diff.hpp"

namespace vramsim {
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

}  // namespace

// Watches every trace event as it is recorded: the invariants of the
// expectations, and the time registered workers spend with nothing placed.
class RunWatcher final : public TraceSink {
 public:
  RunWatcher(const RunView& w, const std::vector<const Expectation*>& invariants) : w_(w) {
    for (const Expectation* e : invariants) checks_.push_back(Check{e, std::nullopt, 0});
  }
  struct Check {
    const Expectation* ex = nullptr;
    std::optional<std::string> violation;  // the first one
    std::int64_t worst = 0;                // max_worker_jobs: most jobs seen
  };
  void write(const TraceEvent& ev) override {
    // The state after the previous event held until this one.
    const double dt = to_seconds(ev.t - last_t_);
    idle_node_seconds_ += dt * static_cast<double>(idle_nodes_);
    gpu_booked_seconds_ += dt * gpus_booked_;
    vram_booked_mb_seconds_ += dt * vram_booked_mb_;
    vram_advertised_mb_seconds_ += dt * vram_advertised_mb_;
    gpu_observed_seconds_ += dt * static_cast<double>(gpus_observed_);
    last_t_ = ev.t;
    // Kept up to date by the cluster state: O(1) per event, not a walk
    // over every node.
    idle_nodes_ = w_.cluster.idle_worker_count();
    const ClusterState::Totals& tot = w_.cluster.totals();
    gpus_booked_ = to_double(tot.gpu_used);
    vram_advertised_mb_ = to_double(tot.vram_total);
    vram_booked_mb_ = to_double(tot.vram_used);
    gpus_observed_ = 0;
    if (w_.backend.measures_memory())  // live runs: a handful of nodes
      for (const Node* n : w_.cluster.alive_nodes())
        for (const auto& d : n->devices())
          if (d.observed_used_bytes.value_or(0) > 0) ++gpus_observed_;
    if (ev.kind == "shutdown_done") shutdown_done_ = true;
    for (auto& c : checks_) check(c, ev);
  }
  // The end of the run counts as one more event.
  void finish(SimTime end) { write(TraceEvent{end, "run_end", Json::object()}); }
  const std::vector<Check>& checks() const { return checks_; }
  bool shutdown_done() const { return shutdown_done_; }
  double idle_node_seconds() const { return idle_node_seconds_; }
  double gpu_booked_seconds() const { return gpu_booked_seconds_; }
  double gpu_observed_seconds() const { return gpu_observed_seconds_; }
  double vram_booked_mb_seconds() const { return vram_booked_mb_seconds_; }
  double vram_advertised_mb_seconds() const { return vram_advertised_mb_seconds_; }

 private:
  void check(Check& c, const TraceEvent& ev) {
    const std::string at = " at " + format_seconds(ev.t) + " s (" + ev.kind + ")";
    auto violate = [&](const std::string& what) { if (!c.violation) c.violation = what + at; };
    if (c.ex->invariant == "max_worker_jobs") {
      const auto live = static_cast<std::int64_t>(w_.backend.job_count());
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
      for (const auto& j : w_.backend.list_jobs()) left += (left.empty() ? "" : ", ") + j.id;
      if (!left.empty()) violate("job(s) " + left + " still queued or running after shutdown");
    }
  }
  RunView w_;
  std::vector<Check> checks_;
  SimTime last_t_ = 0;
  std::size_t idle_nodes_ = 0;
  double idle_node_seconds_ = 0;
  // Booked and advertised amounts over alive nodes (head included) now, and
  // their integrals over time.
  double gpus_booked_ = 0, vram_booked_mb_ = 0, vram_advertised_mb_ = 0;
  std::size_t gpus_observed_ = 0;
  double gpu_booked_seconds_ = 0, vram_booked_mb_seconds_ = 0, vram_advertised_mb_seconds_ = 0;
  double gpu_observed_seconds_ = 0;
  bool shutdown_done_ = false;
};

namespace {

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

ExpectationResult check_app(const Expectation& e, const RunView& w, const std::vector<TraceEvent>& events) {
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
  // No "match": the kind alone, whatever fields the event has (or none).
  return ev.kind == p.event && (p.match.empty() || json_matches(p.match, ev.fields));
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
  const std::map<std::string, std::optional<double>> values = {
      {"jobs_submitted", m.jobs_submitted}, {"jobs_cancelled", m.jobs_cancelled}, {"jobs_left", m.jobs_left},
      {"jobs_timeout", m.jobs_timeout}, {"jobs_never_started", m.jobs_never_started},
      {"orphaned_job_seconds", m.orphaned_job_seconds},
      {"scale_ups", m.scale_ups}, {"scale_downs", m.scale_downs}, {"device_overbookings", m.device_overbookings},
      {"sbatch_refusals", m.sbatch_refusals}, {"pending_forever", static_cast<double>(m.pending_forever)},
      {"gpu_fragmentation", m.gpu_fragmentation}, {"gpu_fragmentation_share", m.gpu_fragmentation_share},
      {"gpu_allocation", m.gpu_allocation}, {"sampled_vram_utilisation", m.sampled_vram_utilisation},
      {"gpu_hours_allocated", m.gpu_hours_allocated}, {"cost_usd", m.cost_usd},
      {"req_completed", m.req_completed}, {"req_refused", m.req_refused}, {"req_timed_out", m.req_timed_out},
      {"req_cold", m.req_cold}, {"req_failed", m.req_failed}, {"req_unfinished", m.req_unfinished},
      {"req_wait_mean_s", m.req_wait_mean_s}, {"req_latency_mean_s", m.req_latency_mean_s},
      {"req_latency_p50_s", m.req_latency_p50_s},
      {"req_latency_p95_s", m.req_latency_p95_s}, {"req_latency_p99_s", m.req_latency_p99_s},
      {"req_slo_attainment", m.req_slo_attainment}, {"replica_seconds", m.replica_seconds},
      {"jobs_timeout_serving", m.jobs_timeout_serving}, {"replicas_lost_time_limit", m.replicas_lost_time_limit},
      {"req_failed_time_limit", m.req_failed_time_limit}};
  r.description = "metric " + e.metric;
  const std::optional<double> measured = values.at(e.metric);
  if (!measured) {
    r.held = false;
    r.why = "not measured in this run (no serving app, or no price for a GPU model)";
    return r;
  }
  const double v = *measured;
  r.held = true;
  if (e.equals) { r.description += " == " + format_number(*e.equals); r.held = r.held && std::fabs(v - *e.equals) < 1e-9; }
  if (e.min) { r.description += " >= " + format_number(*e.min); r.held = r.held && v >= *e.min; }
  if (e.max) { r.description += " <= " + format_number(*e.max); r.held = r.held && v <= *e.max; }
  r.why = "was " + format_number(v);
  return r;
}

// Demands still pending at the end, and why: pending forever when no node
// that joined during the run could ever hold one (judged on its totals).
std::vector<UnplacedDemand> unplaced_demands(const RunView& w, const std::vector<TraceEvent>& events) {
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

// Nearest rank: the smallest value with at least p% of the values at or below it.
std::optional<double> percentile(std::vector<double> v, double p) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100 * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

// From the job events both worlds record: rejected deploys, the GPU time
// worker jobs held, and how long they queued (workers up at t=0 never did).
void job_metrics(const std::vector<TraceEvent>& ev, SimTime end, RunMetrics& m) {
  struct Job { double gpus = 0; std::optional<SimTime> submitted, started, ended; };
  std::map<std::string, Job> jobs;
  for (const auto& e : ev) {
    if (e.kind == "admission" && !e["admitted"].get<bool>()) ++m.rejected_deployments;
    if (e.kind != "job_submitted" && e.kind != "job_started" && e.kind != "job_ended") continue;
    Job& j = jobs[e["job"].get<std::string>()];
    if (e.kind == "job_submitted") {
      j.gpus = e["gpus"].get<double>();
      if (!e.fields.contains("warm")) j.submitted = e.t;
    } else if (e.kind == "job_started") {
      j.started = e.t;
    } else if (!j.ended) {
      j.ended = e.t;
    }
  }
  std::vector<double> waits;
  for (const auto& [id, j] : jobs) {
    if (!j.started) continue;
    m.gpu_hours_allocated += j.gpus * to_seconds(j.ended.value_or(end) - *j.started) / 3600;
    if (j.submitted) waits.push_back(to_seconds(*j.started - *j.submitted));
  }
  if (!waits.empty()) {
    double sum = 0;
    for (double w : waits) sum += w;
    m.queue_wait_mean_s = sum / static_cast<double>(waits.size());
  }
  m.queue_wait_p95_s = percentile(waits, 95);
}

}  // namespace

void RunMetrics::for_each(const std::function<void(const char*, std::optional<double>)>& f) const {
  f("jobs_submitted", jobs_submitted);
  f("jobs_cancelled", jobs_cancelled);
  f("jobs_timeout", jobs_timeout);
  f("jobs_left", jobs_left);
  f("jobs_never_started", jobs_never_started);
  f("orphaned_job_seconds", orphaned_job_seconds);
  f("scale_ups", scale_ups);
  f("scale_downs", scale_downs);
  f("device_overbookings", device_overbookings);
  f("sbatch_refusals", sbatch_refusals);
  f("pending_forever", static_cast<double>(pending_forever));
  f("idle_node_seconds", idle_node_seconds);
  f("end_time_s", to_seconds(end_time));
  f("shut_down", shut_down ? 1 : 0);
  f("events", static_cast<double>(events));
  f("ttr_p50_s", ttr_p50_s);
  f("ttr_p95_s", ttr_p95_s);
  f("ttr_p99_s", ttr_p99_s);
  f("rejected_deployments", rejected_deployments);
  f("apps", apps_deployed);
  f("apps_reached_running", apps_running);
  f("gpu_hours_allocated", gpu_hours_allocated);
  f("gpu_hours_booked", gpu_hours_booked);
  f("gpu_hours_observed", gpu_hours_observed);
  f("vram_utilisation", vram_utilisation);
  f("queue_wait_mean_s", queue_wait_mean_s);
  f("queue_wait_p95_s", queue_wait_p95_s);
  f("req_completed", req_completed);
  f("req_refused", req_refused);
  f("req_timed_out", req_timed_out);
  f("req_cold", req_cold);
  f("req_failed", req_failed);
  f("req_unfinished", req_unfinished);
  f("req_wait_mean_s", req_wait_mean_s);
  f("req_latency_mean_s", req_latency_mean_s);
  f("req_latency_p50_s", req_latency_p50_s);
  f("req_latency_p95_s", req_latency_p95_s);
  f("req_latency_p99_s", req_latency_p99_s);
  f("req_slo_attainment", req_slo_attainment);
  f("replica_seconds", replica_seconds);
  f("jobs_timeout_serving", jobs_timeout_serving);
  f("replicas_lost_time_limit", replicas_lost_time_limit);
  f("req_failed_time_limit", req_failed_time_limit);
  f("cost_usd", cost_usd);
  // Sampled means, with a workload's utilisation samples (docs/workloads-openb.md).
  const auto sampled = [this](double v) { return utilisation_samples > 0 ? std::optional<double>(v) : std::nullopt; };
  f("gpu_allocation", sampled(gpu_allocation));
  f("sampled_vram_utilisation", sampled(sampled_vram_utilisation));
  f("gpu_fragmentation", sampled(gpu_fragmentation));
  f("gpu_fragmentation_share", sampled(gpu_fragmentation_share));
  // Empty without a background load.
  const auto bg = [this](double v) { return background_jobs > 0 ? std::optional<double>(v) : std::nullopt; };
  f("background_jobs", bg(static_cast<double>(background_jobs)));
  f("background_skipped", bg(static_cast<double>(background_skipped)));
  f("background_started", bg(static_cast<double>(background_started)));
  f("background_never_started", bg(static_cast<double>(background_never_started)));
  f("background_wait_mean_s", bg(background_wait_mean_s));
  f("background_core_share", bg(background_core_share));
  f("background_gpu_share", bg(background_gpu_share));
}

ScenarioDriver::ScenarioDriver(const Scenario& sc, RunView world, RunResult& result)
    : sc_(sc), w_(world), result_(result),
      status_opts_{sc.control.slurm_mode, 30 * kSecond, sc.control.slurm_mode, world.control.policies().pending},
      memory_(std::make_shared<MemorySink>()),
      traffic_rng_(result.seed) {
  std::vector<const Expectation*> invariants;
  for (const auto& ex : sc_.expectations)
    if (ex.kind == Expectation::Kind::Invariant) invariants.push_back(&ex);
  watcher_ = std::make_shared<RunWatcher>(w_, invariants);
  // A scenario that reads the status keeps each pass's snapshot from the start.
  if (std::any_of(sc_.expectations.begin(), sc_.expectations.end(),
                  [](const Expectation& ex) { return ex.kind == Expectation::Kind::StatusLine; }) ||
      std::any_of(sc_.actions.begin(), sc_.actions.end(), [](const ScenarioAction& a) { return a.kind == "status"; }))
    keep_status();
  on_shutdown_action = [this](std::optional<Duration> blocking_timeout) { w_.control.shutdown({}, blocking_timeout); };
}

ScenarioDriver::~ScenarioDriver() = default;

const std::vector<TraceEvent>& ScenarioDriver::events() const { return memory_->events; }

void ScenarioDriver::attach() {
  w_.trace.add_sink(watcher_);
  w_.trace.add_sink(memory_);  // last: it keeps each event without a copy
}

void ScenarioDriver::keep_status() { w_.control.keep_status(status_opts_); }

Json ScenarioDriver::status_now() { return w_.control.status(); }

Json ScenarioDriver::take_status(const std::string& source, const Json& expect, const std::string& path) {
  const SimTime now = w_.exec.now();
  Json state = status_now();
  const auto pass = w_.control.status_from_pass();
  auto lines = format_status_lines(state);
  result_.status_lines.push_back("status at " + format_seconds(now) + " s (" + source + (pass ? ", the pass at " + format_seconds(*pass) + " s" : std::string()) + "): " + vram_summary(state));
  for (const auto& l : format_status_text(state)) result_.status_lines.push_back(l);
  Json line_json = Json::array();
  for (const auto& l : lines) line_json.push_back(l);
  w_.trace.record(now, "status", {{"source", source}, {"lines", line_json}});
  Json snapshot = {{"t", now}, {"source", source}, {"state", state}};
  if (pass) snapshot["pass_t"] = *pass;
  snapshots_.push_back(std::move(snapshot));
  for (auto it = expect.begin(); it != expect.end(); ++it) {
    ExpectationResult r;
    r.path = path + ".expect." + it.key();
    r.description = "status " + it.key() + " == " + it.value().dump() + " at " + format_seconds(now) + " s";
    const Json* got = lookup_path(state, it.key());
    r.held = got && json_matches(it.value(), *got);
    r.why = got ? "was " + got->dump() : "no such field";
    result_.expectations.push_back(r);
  }
  return state;
}

void ScenarioDriver::schedule(const std::vector<Duration>& status_at, std::optional<Duration> status_every,
                              const std::string& csv_path) {
  // GPU use samples, evenly spaced over the horizon (the middle of each slice).
  for (int i = 0; i < sc_.utilisation_samples; ++i) {
    const SimTime t = static_cast<SimTime>((static_cast<double>(i) + 0.5) / sc_.utilisation_samples *
                                           static_cast<double>(sc_.horizon));
    w_.exec.at(t, [this] { sampler_.sample(w_.cluster); });
  }
  // Status-line expectations look at a status taken at their time.
  for (const auto& ex : sc_.expectations) {
    if (ex.kind != Expectation::Kind::StatusLine) continue;
    w_.exec.at(ex.at, [this, &ex] {
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
      line_results_[&ex] = r;
    });
  }
  for (const auto& s : sc_.apps) spec_of_[s.id] = &s;  // one lookup per deploy, not a scan
  schedule_traffic();
  for (const auto& a : sc_.actions) {
    w_.exec.at(a.at, [this, &a] {
      if (a.kind == "deploy") {
        w_.control.deploy(a.app_override ? *a.app_override : *spec_of_.at(a.app));
        // Traffic without a start begins with the app's first deploy.
        if (auto t = traffic_.find(a.app); t != traffic_.end() && !t->second.started &&
                                           !sc_.traffic.at(a.app).start)
          start_traffic(a.app, w_.exec.now());
      } else if (a.kind == "stop") {
        w_.control.stop_app(a.app);
      } else if (a.kind == "delete") {
        w_.control.delete_app(a.app);
      } else if (a.kind == "shutdown") {
        on_shutdown_action(a.blocking_timeout);
      } else if (a.kind == "status") {
        take_status(a.json_path, a.expect, a.json_path);
      } else if (a.kind == "call") {
        w_.control.call_app(a.app, a.payload);
      }
      if (after_action) after_action();
    });
  }
  for (Duration t : status_at)
    w_.exec.at(t, [this] { take_status("--status-at", Json::object(), "--status-at"); });
  if (status_every) {
    csv_ = std::make_unique<OutputFile>(csv_path);
    csv_->write(status_csv_header() + "\n");
    timeline_ = w_.exec.every(*status_every, [this] {
      const SimTime now = w_.exec.now();
      for (const auto& row : status_csv_rows(status_now(), now))
        csv_->write(row + "\n");
    }, 0);
  }
}

void ScenarioDriver::finish(SimTime end, std::uint64_t events, const Json& end_fields,
                            const std::function<void(RunMetrics&)>& world_metrics) {
  close_trace(end, events, end_fields);
  count_metrics(end, events, world_metrics);
  app_outcomes();
  check_expectations(end);
}

void ScenarioDriver::schedule_fragmentation(const std::string& path, const std::string& nodes_path,
                                            const std::string& placement, const std::vector<TaskShape>& tasks,
                                            const std::vector<TaskShape>& typical) {
  frag_csv_ = std::make_unique<OutputFile>(path);
  frag_csv_->write("arrival,time_s,pod,placement,pod_gpus,arrived_gpus,arrived_share,gpus,allocated_gpus,"
                   "unallocated_gpus,fragmented_gpus,nodes_fragmented,node_fragmentation_max\n");
  frag_nodes_path_ = nodes_path;
  frag_placement_ = placement;
  frag_meter_ = std::make_unique<FragmentationMeter>(typical);
  std::map<std::string, double> demand;
  for (std::size_t i = 0; i < sc_.apps.size() && i < tasks.size(); ++i)
    demand[sc_.apps[i].id] = to_double(tasks[i].gpus) * std::max(1, sc_.apps[i].replicas);
  for (const auto& a : sc_.actions)
    if (a.kind == "deploy") arrivals_.push_back(Arrival{a.at, a.app, demand.count(a.app) ? demand[a.app] : 0.0});
  // Each arrival's row just before the next arrival time; the last ones at
  // the end of the run (close_trace).
  for (std::size_t i = 0; i + 1 < arrivals_.size(); ++i) {
    const SimTime at = arrivals_[i].at, next = arrivals_[i + 1].at;
    if (next > at) w_.exec.at(std::max(at, next - 1), [this, at] { fragmentation_rows(at); });
  }
}

void ScenarioDriver::fragmentation_rows(SimTime upto) {
  if (arrivals_written_ >= arrivals_.size() || arrivals_[arrivals_written_].at > upto) return;
  const ClusterFragmentation c = frag_meter_->measure(w_.cluster);
  const std::string state = "," + format_amount(c.gpus) + "," + format_amount(c.allocated) + "," +
                            format_amount(c.unallocated()) + "," + format_amount(c.fragmented) + "," +
                            std::to_string(c.nodes_fragmented) + "," + format_amount(c.node_max) + "\n";
  for (; arrivals_written_ < arrivals_.size() && arrivals_[arrivals_written_].at <= upto; ++arrivals_written_) {
    const Arrival& a = arrivals_[arrivals_written_];
    arrived_gpus_ += a.gpus;
    frag_csv_->write(std::to_string(arrivals_written_ + 1) + "," + format_number(to_seconds(a.at)) + "," + a.app +
                     "," + frag_placement_ + "," + format_amount(a.gpus) + "," + format_amount(arrived_gpus_) + "," +
                     format_amount(c.gpus > 0 ? arrived_gpus_ / c.gpus : 0) + state);
  }
}

void ScenarioDriver::close_trace(SimTime end, std::uint64_t events, const Json& end_fields) {
  timeline_.cancel();
  if (csv_) csv_->close();
  if (frag_csv_) {
    fragmentation_rows(kTimeMax);
    frag_csv_->close();
    if (!frag_nodes_path_.empty()) {
      OutputFile nodes(frag_nodes_path_);
      nodes.write("node,model,gpus,allocated_gpus,fragmented_gpus,cpus_free\n");
      for (const auto& n : frag_meter_->per_node(w_.cluster))
        nodes.write(n.node + "," + n.model + "," + std::to_string(n.gpus) + "," + format_amount(n.allocated) + "," +
                    format_amount(n.fragmented) + "," + format_amount(n.cpus_free) + "\n");
      nodes.close();
    }
  }
  serve_timeline_.cancel();
  if (serve_csv_) serve_csv_->close();
  // What never found a node, said in the trace before the run ends.
  result_.unplaced = unplaced_demands(w_, memory_->events);
  for (const auto& u : result_.unplaced)
    w_.trace.record(end, "demand_unplaced", {{"label", u.label}, {"app", u.app}, {"request", u.request},
                                             {"forever", u.forever}, {"reason", u.reason}});
  // What each serving app's requests met, said in the trace (vramsim diff
  // compares it across worlds) before the run ends.
  serve_stats_ = w_.control.serve_stats();
  for (auto& [id, s] : serve_stats_) {
    result_.serving.push_back(serve_outcome(id, s));
    ServeOutcome& o = result_.serving.back();
    for (const auto& a : sc_.apps)
      if (a.id == id && a.serve) {
        o.device_sharing = a.serve->device_sharing.name;
        o.replica_concurrency = a.serve->replica_concurrency.name;
      }
    auto us = [](std::optional<double> v) { return v && std::isfinite(*v) ? Json(std::llround(*v * 1e6)) : Json(); };
    w_.trace.record(end, "serve_summary",
                    {{"app", id}, {"arrived", o.arrived}, {"completed", o.completed}, {"refused", o.refused},
                     {"timed_out", o.timed_out}, {"failed", o.failed}, {"unfinished", o.unfinished}, {"cold", o.cold},
                     {"wait_mean_us", us(o.wait_mean_s)}, {"p50_us", us(o.p50_s)}, {"p95_us", us(o.p95_s)},
                     {"p99_us", us(o.p99_s)}});
  }
  Json ended = {{"events", events}};
  for (auto it = end_fields.begin(); it != end_fields.end(); ++it) ended[it.key()] = it.value();
  w_.trace.record(end, "run_ended", ended);
  w_.trace.close();
  watcher_->finish(end);
}

void ScenarioDriver::count_metrics(SimTime end, std::uint64_t events,
                                   const std::function<void(RunMetrics&)>& world_metrics) {
  RunMetrics& m = result_.metrics;
  const auto& ev = memory_->events;
  m.end_time = end;
  m.shut_down = w_.control.shutdown_done_at().has_value();
  m.events = events;
  for (const auto& e : ev) {
    if (e.kind == "job_submitted" && !e.fields.contains("warm")) ++m.jobs_submitted;
    if (e.kind == "scale_up") ++m.scale_ups;
    if (e.kind == "scale_down") ++m.scale_downs;
    if (e.kind == "device_vram_overbooked") ++m.device_overbookings;
    if (e.kind == "shutdown_done") m.jobs_left = static_cast<int>(e["jobs_left"].size());
    if (e.kind == "job_rejected" && m.sbatch_refusals++ == 0) m.sbatch_error = e["error"].get<std::string>();
  }
  m.pending_forever = static_cast<std::size_t>(
      std::count_if(result_.unplaced.begin(), result_.unplaced.end(), [](const auto& u) { return u.forever; }));
  m.idle_node_seconds = watcher_->idle_node_seconds();
  m.gpu_hours_booked = watcher_->gpu_booked_seconds() / 3600;
  if (w_.backend.measures_memory()) m.gpu_hours_observed = watcher_->gpu_observed_seconds() / 3600;
  if (watcher_->vram_advertised_mb_seconds() > 0)
    m.vram_utilisation = watcher_->vram_booked_mb_seconds() / watcher_->vram_advertised_mb_seconds();
  job_metrics(ev, end, m);
  if (sc_.utilisation_samples > 0) sample_fragmentation(m);
  world_metrics(m);
  serve_metrics(m);
  cost_metrics(m);
}

void ScenarioDriver::schedule_serve_timeline(const std::string& path, Duration window) {
  serve_csv_ = std::make_unique<OutputFile>(path);
  serve_csv_->write("time_s,app,arrival_rate_per_s,completed,never,latency_p50_s,latency_p95_s,latency_p99_s,"
                    "replicas,ongoing_requests,window_s,slo_latency_s\n");
  serve_window_ = window;
  w_.control.keep_serve_windows();
  serve_timeline_ = w_.exec.every(window, [this] {
    const double t = to_seconds(w_.exec.now());
    auto opt = [](std::optional<double> v) { return v ? format_number(*v) : std::string(); };
    for (const ServeWindow& s : w_.control.take_serve_window())
      serve_csv_->write(format_number(t) + "," + s.app + "," +
                        format_number(static_cast<double>(s.arrivals) / to_seconds(serve_window_)) + "," +
                        std::to_string(s.completed) + "," + std::to_string(s.never) + "," + opt(s.p50_s) + "," +
                        opt(s.p95_s) + "," + opt(s.p99_s) + "," + std::to_string(s.replicas) + "," +
                        format_number(s.ongoing) + "," + format_number(to_seconds(serve_window_)) + "," +
                        opt(s.slo_latency_s) + "\n");
  });
}

void ScenarioDriver::schedule_traffic() {
  for (const auto& [id, spec] : sc_.traffic) {
    Traffic& t = traffic_[id];
    t.source = std::make_unique<TrafficSource>(spec, traffic_rng_.stream("serve." + id + ".arrivals"));
    if (spec.start) {
      const std::string app = id;
      const SimTime at = *spec.start;
      w_.exec.at(at, [this, app, at] { start_traffic(app, at); });
    }
  }
}

void ScenarioDriver::start_traffic(const std::string& app_id, SimTime origin) {
  Traffic& t = traffic_.at(app_id);
  t.started = true;
  t.origin = origin;
  t.end = sc_.traffic.at(app_id).end;
  next_arrival(app_id);
}

void ScenarioDriver::next_arrival(const std::string& app_id) {
  Traffic& t = traffic_.at(app_id);
  const auto a = t.source->next();
  if (!a) return;
  const SimTime at = t.origin + a->at;
  if ((t.end && at > *t.end) || at > sc_.horizon) return;
  const Duration service = a->service;
  // The map's key outlives the run: the closure holds a reference to it.
  const std::string& key = traffic_.find(app_id)->first;
  w_.exec.at(at, [this, &key, service] {
    w_.control.serve_request(key, service);
    next_arrival(key);
  });
}

void ScenarioDriver::serve_metrics(RunMetrics& m) {
  if (serve_stats_.empty()) return;
  // A request through an application of several deployments counts once,
  // at its ingress, end to end: the calls it made downstream are not more
  // requests (their figures are their deployments' own rows).
  // With metrics_app, that app's requests only (an application's at its
  // ingress), and the replica-seconds of it (of all its deployments).
  std::map<std::string, ServeStats> requests, held;
  const auto application = sc_.applications.find(sc_.metrics_app);
  for (const auto& [id, st] : serve_stats_) {
    const auto spec = spec_of_.find(id);
    const bool downstream = spec != spec_of_.end() && !spec->second->application_members.empty() &&
                            spec->second->application_members.front() != id;
    if (sc_.metrics_app.empty()) {
      if (!downstream) requests.emplace(id, st);
      held.emplace(id, st);
    } else if (application != sc_.applications.end()) {
      if (spec != spec_of_.end() && spec->second->application == sc_.metrics_app) {
        if (!downstream) requests.emplace(id, st);
        held.emplace(id, st);
      }
    } else if (id == sc_.metrics_app) {
      requests.emplace(id, st);
      held.emplace(id, st);
    }
  }
  if (requests.empty()) return;
  const ServeTotals t = serve_totals(requests);
  m.req_completed = static_cast<double>(t.completed);
  m.req_refused = static_cast<double>(t.refused);
  m.req_timed_out = static_cast<double>(t.timed_out);
  m.req_cold = static_cast<double>(t.cold);
  m.req_failed = static_cast<double>(t.failed);
  m.req_unfinished = static_cast<double>(t.unfinished);
  m.req_wait_mean_s = t.wait_mean_s;
  m.req_latency_mean_s = t.latency_mean_s;
  m.req_latency_p50_s = t.p50_s;
  m.req_latency_p95_s = t.p95_s;
  m.req_latency_p99_s = t.p99_s;
  m.req_slo_attainment = t.slo_attainment;
  m.replica_seconds = requests.size() == held.size() ? t.replica_seconds : serve_totals(held).replica_seconds;
}

void ScenarioDriver::cost_metrics(RunMetrics& m) {
  if (m.gpu_hours_by_model.empty()) return;
  double cost = 0;
  for (const auto& [model, hours] : m.gpu_hours_by_model) {
    double price = 0;
    if (auto it = sc_.gpu_prices.find(model); it != sc_.gpu_prices.end()) price = it->second;
    else if (const GpuPrice* p = find_gpu_price(model)) price = p->usd_per_gpu_hour;
    else { m.unpriced.push_back(model); continue; }
    cost += hours * price;
  }
  if (m.unpriced.empty()) m.cost_usd = cost;
}

void ScenarioDriver::sample_fragmentation(RunMetrics& m) {
  // The workload's task mix: every sized app's replica request, by replicas.
  std::vector<TaskShape> tasks;
  for (const auto& [id, app] : w_.control.apps())
    if (app.sizing.ok() && !app.replica_request.empty())
      tasks.push_back(TaskShape{app.replica_request.get_amount(kCPUId), app.replica_request.get_amount(kGPUId),
                                static_cast<double>(app.spec.replicas)});
  const auto u = sampler_.evaluate(tasks);
  m.utilisation_samples = u.samples;
  m.gpu_fragmentation = u.gpu_fragmentation;
  m.gpu_fragmentation_share = u.gpu_fragmentation_share;
  m.gpu_allocation = u.gpu_allocation;
  m.sampled_vram_utilisation = u.vram_utilisation;
}

void ScenarioDriver::app_outcomes() {
  RunMetrics& m = result_.metrics;
  // One pass over the trace: each app's first deploy request and first RUNNING.
  std::map<std::string, Duration> to_running;
  for (const auto& a : deploy_to_running(memory_->events))
    if (a.running) to_running.emplace(a.app, *a.running - a.requested);
  for (const auto& [id, app] : w_.control.apps()) {
    AppOutcome o;
    o.id = id;
    o.admitted = !app.admitted ? "pending" : (*app.admitted ? "admitted" : "rejected");
    o.final_state = name(app.life.state());
    if (auto t = to_running.find(id); t != to_running.end()) o.time_to_running = t->second;
    o.reservation = reservation_shape(app);
    o.message = app.message;
    result_.apps.push_back(o);
  }
  std::vector<double> ttr;
  for (const auto& a : result_.apps)
    if (a.time_to_running) ttr.push_back(to_seconds(*a.time_to_running));
  m.ttr_p50_s = percentile(ttr, 50);
  m.ttr_p95_s = percentile(ttr, 95);
  m.ttr_p99_s = percentile(ttr, 99);
  m.apps_deployed = static_cast<int>(result_.apps.size());
  m.apps_running = static_cast<int>(ttr.size());
}

void ScenarioDriver::check_expectations(SimTime end) {
  const auto& ev = memory_->events;
  for (const auto& ex : sc_.expectations) {
    switch (ex.kind) {
      case Expectation::Kind::App: result_.expectations.push_back(check_app(ex, w_, ev)); break;
      case Expectation::Kind::Event: result_.expectations.push_back(check_event(ex, ev)); break;
      case Expectation::Kind::Metric: result_.expectations.push_back(check_metric(ex, result_.metrics)); break;
      case Expectation::Kind::Invariant:
        for (const auto& c : watcher_->checks())
          if (c.ex == &ex) result_.expectations.push_back(invariant_result(c, *watcher_));
        break;
      case Expectation::Kind::StatusLine: {
        auto it = line_results_.find(&ex);
        if (it != line_results_.end()) {
          result_.expectations.push_back(it->second);
        } else {
          ExpectationResult r;
          r.path = ex.json_path;
          r.name = ex.name;
          r.description = "status line of " + ex.node + " at " + format_seconds(ex.at) + " s";
          r.why = "the run ended at " + format_seconds(end) + " s, before the status was due";
          result_.expectations.push_back(r);
        }
        break;
      }
    }
  }
}

void ScenarioDriver::write_status_json(const std::string& path) const {
  OutputFile out(path);
  out.write(snapshots_.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
  out.close();
}

}  // namespace vramsim
