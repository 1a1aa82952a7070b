#pragma once
// What `vramsim explain` gathers from a trace before it judges anything:
// the run's facts (nodes that registered, the jobs, each app's events) and
// each app's last deploy attempt. The cause rules (explain_causes.cpp) and
// the output (explain.cpp) read them. Internal to analysis/.
#include <map>
#include <string>
#include <vector>

#include "analysis/explain.hpp"

namespace vramsim::explain_detail {

// Field readers that tolerate any JSON: a trace may come from elsewhere.
inline double json_number(const Json& j, double otherwise = 0) { return j.is_number() ? j.get<double>() : otherwise; }
inline bool flag(const Json& j) { return j.is_boolean() && j.get<bool>(); }
// "12.345 s"
std::string seconds(SimTime t);
// "a, b and c"
std::string join(const std::vector<std::string>& items);

struct RegisteredNode {
  std::string name, job, ip;
  Json resources = Json::object();
  SimTime joined = 0;
  bool head() const { return job.empty(); }
  double offers(const std::string& r) const { return resources.is_object() ? json_number(resources.value(r, Json())) : 0; }
};

// What the trace says about the run as a whole, gathered once.
struct RunFacts {
  Json policies = Json::object();
  std::vector<RegisteredNode> nodes;               // every node that registered, in order
  std::map<std::string, std::string> node_of_job;  // job -> node
  std::map<std::string, std::string> notice_of_job;  // job -> advertisement notice
  std::vector<std::string> apps;                    // in order of their first deploy
  std::map<std::string, std::vector<std::size_t>> by_app;  // app -> indices of its events
  std::vector<std::size_t> job_events;  // scale-ups and what became of worker jobs, by index

  std::string variant(const std::string& model) const {
    return policies.is_object() ? string_field(policies.value(model, Json())) : "";
  }};

RunFacts gather(const std::vector<TraceEvent>& events);

// The events of the app's last deploy attempt, from its deploy_requested on.
struct Attempt {
  std::size_t from = 0;
  const TraceEvent* sizing = nullptr;
  const TraceEvent* admission = nullptr;
  const TraceEvent* submitted = nullptr;  // replicas_submitted
  const TraceEvent* request = nullptr;    // deploy_requested
  const TraceEvent* cancelled = nullptr;  // deploy_cancelled / deploy_ignored
  const TraceEvent* start_failed = nullptr;
  const TraceEvent* stopped = nullptr;  // app_state to DELETING
  std::vector<const TraceEvent*> unplaced;  // demand_unplaced of its replicas
  std::string state = "NOT_STARTED";
};

Attempt last_attempt(const std::vector<TraceEvent>& events, const std::vector<std::size_t>& of_app);

// The causes of one app's outcome (blocking first, then notes), and its
// final state; the run's own findings; the cold starts a serving app's
// requests met.
std::vector<Cause> app_causes(const std::vector<TraceEvent>& events, const std::string& app, bool running,
                              const RunFacts& f, std::string& state);
std::vector<Cause> run_findings(const std::vector<TraceEvent>& events, const RunFacts& f);
std::vector<ColdStartRequest> cold_starts(const std::vector<TraceEvent>& events, const std::string& id);

}  // namespace vramsim::explain_detail
