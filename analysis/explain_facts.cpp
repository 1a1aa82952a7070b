#include "analysis/explain_facts.hpp"

#include <cstdio>
#include <set>

namespace vramsim::explain_detail {

std::string seconds(SimTime t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f s", to_seconds(t));
  return buf;
}

// "a, b and c"
std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

RunFacts gather(const std::vector<TraceEvent>& events) {
  RunFacts f;
  f.policies = events.front()["policies"];
  std::set<std::string> seen;
  auto job_kind = [](TraceKind k) {
    return k == TraceKind::job_rejected || k == TraceKind::job_submitted || k == TraceKind::job_ended ||
           k == TraceKind::node_registered || k == TraceKind::scale_up || k == TraceKind::job_pending;
  };
  for (std::size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    if (e["app"].is_string()) f.by_app[e["app"].get<std::string>()].push_back(i);
    if (job_kind(e.kind)) f.job_events.push_back(i);
    if (e.kind == TraceKind::node_registered) {
      RegisteredNode n{string_field(e["node"]), string_field(e["job"]), string_field(e["ip"]), e["resources"], e.t};
      if (!n.resources.is_object()) n.resources = Json::object();
      if (!n.job.empty()) f.node_of_job[n.job] = n.name;
      f.nodes.push_back(std::move(n));
    } else if (e.kind == TraceKind::node_advertised) {
      f.notice_of_job[string_field(e["job"])] = string_field(e["notice"]);
    } else if (e.kind == TraceKind::deploy_requested && e["app"].is_string()) {
      const std::string a = string_field(e["app"]);
      if (seen.insert(a).second) f.apps.push_back(a);
    }
  }
  return f;
}

Attempt last_attempt(const std::vector<TraceEvent>& events, const std::vector<std::size_t>& of_app) {
  Attempt a;
  for (std::size_t i : of_app)
    if (events[i].kind == TraceKind::deploy_requested) a.from = i;
  a.request = &events[a.from];
  for (std::size_t i : of_app) {
    const TraceEvent& e = events[i];
    if (e.kind == TraceKind::app_state) a.state = string_field(e["to"]);
    if (i < a.from) continue;
    if (e.kind == TraceKind::sizing) a.sizing = &e;
    else if (e.kind == TraceKind::admission) a.admission = &e;
    else if (e.kind == TraceKind::replicas_submitted) a.submitted = &e;
    else if (e.kind == TraceKind::deploy_cancelled || e.kind == TraceKind::deploy_ignored) a.cancelled = &e;
    else if (e.kind == TraceKind::replica_start_failed) a.start_failed = &e;
    else if (e.kind == TraceKind::app_state && string_field(e["to"]) == "DELETING" && !a.stopped) a.stopped = &e;
    else if (e.kind == TraceKind::demand_unplaced && string_field(e["label"]).rfind("introspection", 0) != 0) a.unplaced.push_back(&e);
  }
  return a;
}

}  // namespace vramsim::explain_detail
