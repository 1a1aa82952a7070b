#include "observers/expectations.hpp"

#include <climits>
#include <cmath>

#include "engine/format.hpp"
#include "models/status.hpp"
#include "observers/json_match.hpp"

namespace vramsim {
namespace {

std::string describe(const EventPattern& p) {
  return std::string(name(p.event)) + (p.match.empty() ? "" : " matching " + p.match.dump());
}

bool matches(const EventPattern& p, const TraceEvent& ev) {
  // No "match": the kind alone, whatever fields the event has (or none).
  return ev.kind == p.event && (p.match.empty() || json_matches(p.match, ev.fields));
}

ExpectationResult check_metric(const Expectation& e, const RunMetrics& m) {
  ExpectationResult r;
  r.path = e.json_path;
  r.name = e.name;
  r.description = "metric " + e.metric;
  const std::optional<double> measured = find_run_metric(e.metric)->value(m);
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

}  // namespace

Expectations::Expectations(const Scenario& sc, const Invariants& invariants, StatusSnapshots& status)
    : sc_(sc), invariants_(invariants), status_(status) {
  for (const auto& ex : sc.expectations) {
    if (ex.kind == Expectation::Kind::App) {
      apps_[&ex];
      kinds_ |= kinds_of({TraceKind::deploy_requested, TraceKind::app_state, TraceKind::admission, TraceKind::sizing});
    } else if (ex.kind == Expectation::Kind::Event) {
      EventWatch& w = events_[&ex];
      if (!ex.after) w.until = ex.within;
      kinds_ |= kinds_of({ex.pattern.event});
      if (ex.after) kinds_ |= kinds_of({ex.after->event});
      if (ex.before) kinds_ |= kinds_of({ex.before->event});
    }
  }
}

void Expectations::start() {
  // Status-line expectations look at a status taken at their time.
  for (const auto& ex : sc_.expectations) {
    if (ex.kind != Expectation::Kind::StatusLine) continue;
    ctx().exec.at(ex.at, [this, &ex] {
      const Json state = status_.take(ex.json_path, Json::object(), ex.json_path);
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
      lines_[&ex] = r;
    });
  }
}

void Expectations::on_event(const TraceEvent& ev) {
  for (auto& [ex, w] : apps_) {
    if (!ev["app"].is_string() || ev["app"] != ex->app) continue;
    if (ev.kind == TraceKind::deploy_requested && !w.requested) w.requested = ev.t;
    else if (ev.kind == TraceKind::app_state && ex->state && ev["to"] == *ex->state && !w.reached) w.reached = ev.t;
    else if (ev.kind == TraceKind::admission && !w.admission) w.admission = ev;
    else if (ev.kind == TraceKind::sizing && !w.sizing) w.sizing = ev;
  }
  for (auto& [ex, w] : events_) watch_event(*ex, w, ev);
}

void Expectations::watch_event(const Expectation& e, EventWatch& w, const TraceEvent& ev) {
  if (e.after && !w.anchored) {
    // Counting starts after the first anchor, which itself is not counted.
    if (matches(*e.after, ev)) {
      w.anchored = true;
      if (e.within) w.until = ev.t + *e.within;
    }
    return;
  }
  if (e.before) {
    if (w.stopped) return;
    if (matches(*e.before, ev)) {
      w.stopped = true;
      return;
    }
  }
  if (matches(e.pattern, ev) && (!w.until || ev.t <= *w.until)) {
    ++w.count;
    if (!w.first) w.first = ev.t;
  }
}

ExpectationResult Expectations::check_app(const Expectation& e) const {
  const AppWatch& w = apps_.at(&e);
  ExpectationResult r;
  r.path = e.json_path;
  r.name = e.name;
  const AppRecord* app = ctx().control.app(e.app);
  std::vector<std::string> parts, fails;
  if (e.state) {
    const std::string& want = *e.state;
    if (e.within) {
      parts.push_back(want + " within " + format_duration(*e.within));
      if (!w.requested) fails.push_back("the app was never deployed");
      else if (!w.reached) fails.push_back("never reached " + want + " (final state " +
                                           (app ? name(app->life.state()) : "unknown") + ")");
      else if (*w.reached - *w.requested > *e.within)
        fails.push_back("reached " + want + " after " + format_seconds(*w.reached - *w.requested) + " s");
    }
    if (e.at_end) {
      parts.push_back("final state " + want);
      const std::string got = app ? name(app->life.state()) : "NOT_STARTED";
      if (got != want) fails.push_back("final state is " + got);
    }
  }
  const TraceEvent* adm = w.admission ? &*w.admission : nullptr;
  const TraceEvent* sz = w.sizing ? &*w.sizing : nullptr;
  if (e.admitted) {
    const bool want = *e.admitted;
    parts.push_back(want ? "admitted" : "rejected");
    if (!adm) fails.push_back("no admission decision was made");
    else if ((*adm)["admitted"].get<bool>() != want)
      fails.push_back(want ? "rejected: " + (*adm)["message"].get<std::string>()
                           : "admitted (" + (*adm)["reason"].get<std::string>() + ")");
  }
  if (e.message || e.message_contains) {
    std::string msg;
    if (adm) msg = (*adm)["message"].get<std::string>();
    if (msg.empty() && sz) msg = (*sz)["error"].get<std::string>();
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
    if (!sz) fails.push_back("the app was never sized");
    else if (!json_matches(*e.reservation, sz->fields))
      fails.push_back("sized as num_gpus=" + (*sz)["num_gpus"].dump() + ", vram_mb=" + (*sz)["vram_mb"].dump() +
                      " (branch " + (*sz)["branch"].get<std::string>() + ")");
  }
  r.description = "app " + e.app + ": ";
  for (std::size_t i = 0; i < parts.size(); ++i) r.description += (i ? ", " : "") + parts[i];
  r.held = fails.empty();
  for (std::size_t i = 0; i < fails.size(); ++i) r.why += (i ? "; " : "") + fails[i];
  return r;
}

ExpectationResult Expectations::check_event(const Expectation& e) const {
  const EventWatch& w = events_.at(&e);
  ExpectationResult r;
  r.path = e.json_path;
  r.name = e.name;
  r.description = "event " + describe(e.pattern);
  if (e.after)
    r.description += (e.within ? " within " + format_duration(*e.within) : std::string()) + " after the first " +
                     describe(*e.after);
  else if (e.before)
    r.description += " before the first " + describe(*e.before);
  else if (e.within)
    r.description += " within " + format_duration(*e.within);
  const std::int64_t lo = e.min_count, hi = e.max_count;
  if (lo == hi) r.description += ", exactly " + std::to_string(lo);
  else r.description += ", " + std::to_string(lo) + (hi == INT64_MAX ? "+" : ".." + std::to_string(hi));
  r.held = w.count >= lo && w.count <= hi;
  r.why = "seen " + std::to_string(w.count) + " time(s)" + (w.first ? ", first at " + format_seconds(*w.first) + " s" : "");
  if (e.after && !w.anchored) r.why += " (no " + describe(*e.after) + " event)";
  return r;
}

ExpectationResult Expectations::check_status_line(const Expectation& e) const {
  if (auto it = lines_.find(&e); it != lines_.end()) return it->second;
  ExpectationResult r;
  r.path = e.json_path;
  r.name = e.name;
  r.description = "status line of " + e.node + " at " + format_seconds(e.at) + " s";
  r.why = "the run ended at " + format_seconds(end_) + " s, before the status was due";
  return r;
}

void Expectations::conclude(RunResult& result) {
  for (const auto& ex : sc_.expectations) {
    switch (ex.kind) {
      case Expectation::Kind::App: result.expectations.push_back(check_app(ex)); break;
      case Expectation::Kind::Event: result.expectations.push_back(check_event(ex)); break;
      case Expectation::Kind::Metric: result.expectations.push_back(check_metric(ex, result.metrics)); break;
      case Expectation::Kind::Invariant: result.expectations.push_back(invariants_.result(ex)); break;
      case Expectation::Kind::StatusLine: result.expectations.push_back(check_status_line(ex)); break;
    }
  }
}

}  // namespace vramsim
