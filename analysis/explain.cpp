#include "analysis/explain.hpp"

#include <algorithm>

#include "analysis/explain_facts.hpp"

namespace vramsim {

using namespace explain_detail;

namespace {

Json cause_json(const Cause& c) {
  Json j = {{"code", c.code}, {"blocking", c.blocking}};
  j["resource"] = c.resource.empty() ? Json() : Json(c.resource);
  j["needed"] = c.needed ? Json(*c.needed) : Json();
  j["offered"] = c.offered ? Json(*c.offered) : Json();
  j["policy"] = c.policy.empty() ? Json() : Json(c.policy);
  j["variant"] = c.variant.empty() ? Json() : Json(c.variant);
  j["detail"] = c.detail;
  j["sentence"] = c.sentence;
  return j;
}

}  // namespace

Explanation explain_trace(const std::vector<TraceEvent>& events, const std::optional<std::string>& app) {
  if (events.empty() || events.front().kind != TraceKind::run_started)
    throw ExplainError("line 1: expected a run_started event first, got " +
                       (events.empty() ? std::string("an empty trace") : "'" + std::string(name(events.front().kind)) + "'"));
  const RunFacts f = gather(events);
  Explanation x;
  const TraceEvent& start = events.front();
  x.scenario = string_field(start["scenario"]);
  x.mode = string_field(start["mode"]).empty() ? "simulation" : string_field(start["mode"]);
  x.seed = start["seed"].is_number_unsigned() ? start["seed"].get<std::uint64_t>() : 0;
  x.policies = f.policies.is_object() ? f.policies : Json::object();
  x.end = events.back().t;
  if (app && std::find(f.apps.begin(), f.apps.end(), *app) == f.apps.end())
    throw ExplainError("no app '" + *app + "' is deployed in the trace" +
                       (f.apps.empty() ? std::string() : "; apps: " + join(f.apps)));
  std::vector<std::string> ids;
  for (const auto& id : f.apps)
    if (!app || id == *app) ids.push_back(id);
  auto paths = critical_paths(events, ids);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::string& id = ids[i];
    AppExplanation a;
    a.app = id;
    a.path = std::move(paths[i]);
    a.causes = app_causes(events, id, a.path.has_value(), f, a.state);
    a.cold_starts = cold_starts(events, id);
    x.apps.push_back(std::move(a));
  }
  if (!app) x.run = run_findings(events, f);
  return x;
}

void print_explanation(const Explanation& x, std::ostream& out) {
  out << "run " << x.scenario << " (" << x.mode << ", seed " << x.seed << ")  policies";
  for (const auto& [m, v] : x.policies.items()) out << " " << m << "=" << string_field(v);
  out << "\n";
  for (const auto& a : x.apps) {
    out << "\napp " << a.app << ": ";
    if (a.path)
      out << "reached RUNNING at " << seconds(a.path->running) << " (final state " << a.state << ")\n";
    else
      out << "never reached RUNNING (final state " << a.state << ")\n";
    if (a.path) print_critical_path(*a.path, out);
    for (const auto& c : a.causes)
      out << "  " << (c.blocking ? "cause" : "note") << " [" << c.code << "]: " << c.sentence << "\n";
    for (const auto& c : a.cold_starts) {
      out << "  cold start: a request arriving at " << seconds(c.arrived) << " found no running replica; answered "
          << "after " << seconds(c.answered - c.arrived) << " = " << seconds(c.dispatched - c.arrived)
          << " waiting for the cold start + " << seconds(c.answered - c.dispatched) << " service on " << c.replica
          << "\n";
      for (const auto& [t, what] : c.steps) out << "    " << seconds(t) << "  " << what << "\n";
    }
  }
  if (!x.run.empty()) {
    out << "\nrun:\n";
    for (const auto& c : x.run) out << "  note [" << c.code << "]: " << c.sentence << "\n";
  }
}

Json explanation_json(const Explanation& x) {
  Json apps = Json::array();
  for (const auto& a : x.apps) {
    Json path;
    if (a.path) {
      Json steps = Json::array();
      for (const auto& s : a.path->steps)
        steps.push_back({{"t_us", s.t}, {"kind", s.kind}, {"what", s.what}, {"waited", s.waited}});
      path = {{"requested_us", a.path->requested}, {"running_us", a.path->running}, {"steps", steps}};
    }
    Json causes = Json::array();
    for (const auto& c : a.causes) causes.push_back(cause_json(c));
    apps.push_back({{"app", a.app},
                    {"state", a.state},
                    {"reached_running", a.path.has_value()},
                    {"critical_path", path},
                    {"causes", causes}});
    if (!a.cold_starts.empty()) {
      Json cs = Json::array();
      for (const auto& c : a.cold_starts) {
        Json steps = Json::array();
        for (const auto& [t, what] : c.steps) steps.push_back({{"t_us", t}, {"what", what}});
        cs.push_back({{"arrived_us", c.arrived}, {"dispatched_us", c.dispatched}, {"answered_us", c.answered},
                      {"replica", c.replica}, {"steps", steps}});
      }
      apps.back()["cold_starts"] = cs;
    }
  }
  Json run = Json::array();
  for (const auto& c : x.run) run.push_back(cause_json(c));
  return {{"scenario", x.scenario}, {"mode", x.mode}, {"seed", x.seed}, {"policies", x.policies},
          {"end_us", x.end},        {"apps", apps},   {"run", run}};
}

}  // namespace vramsim
