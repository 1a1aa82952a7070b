#pragma once
// `vramsim explain`: why each app of a recorded run is (or is not) RUNNING,
// from the trace alone, so that a simulated and a live trace are read the
// same way. For an app that reached RUNNING: its critical path
// (runner/critical_path.hpp) and notes on how it was sized; for one that
// did not: the causes that kept it from RUNNING, as data (a code, the
// resource, what was needed and offered, the policy variant at work) and as
// a sentence. The codes are listed in docs/explain.md.
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/trace.hpp"
#include "analysis/critical_path.hpp"

namespace vramsim {

// The trace cannot be explained (no run_started first, an unknown --app).
class ExplainError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Cause {
  std::string code;      // e.g. "vram_not_advertised" (docs/explain.md)
  bool blocking = false;  // it kept the app from RUNNING (else a note)
  std::string resource;  // "VRAM_MB", "GPU", "worker_jobs", ... or empty
  std::optional<double> needed, offered;
  std::string policy, variant;  // the model whose variant is at work, if any
  Json detail = Json::object();  // nodes, jobs, figures the sentence names
  std::string sentence;
};

// A serving request that found its app at zero replicas (request_cold_start):
// its latency is the cold start's path, from its arrival to a replica taking
// it, plus its service.
struct ColdStartRequest {
  SimTime arrived = 0, dispatched = 0, answered = 0;
  std::string replica;
  std::vector<std::pair<SimTime, std::string>> steps;  // the cold start, in order
};

struct AppExplanation {
  std::string app;
  std::string state;  // the last app_state reached, or NOT_STARTED
  std::optional<CriticalPath> path;  // present when the app reached RUNNING
  std::vector<Cause> causes;         // blocking ones first
  std::vector<ColdStartRequest> cold_starts;
};

struct Explanation {
  std::string scenario, mode;  // mode: "simulation" or "live"
  std::uint64_t seed = 0;
  Json policies = Json::object();  // model -> variant, from run_started
  SimTime end = 0;                 // time of the last event
  std::vector<AppExplanation> apps;
  std::vector<Cause> run;  // findings about the run as a whole (shutdown, devices)
};

// `app`: only this app (ExplainError if the trace never deploys it).
// Throws ExplainError when the first event is not run_started.
Explanation explain_trace(const std::vector<TraceEvent>& events, const std::optional<std::string>& app = std::nullopt);
void print_explanation(const Explanation& e, std::ostream& out);
Json explanation_json(const Explanation& e);

}  // namespace vramsim
