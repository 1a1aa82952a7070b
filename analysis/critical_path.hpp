#pragma once
// Critical path of an app's deploy: the chain of trace events that decided
// when it reached RUNNING. The trace is turned into a causal graph (an event
// points to the events it waited for: the deploy to its introspection, a
// replica placement to the node that registered, a node to its job's start,
// a job to the scale-up, a scale-up to the pending demand that triggered it),
// and the path is walked back from RUNNING along the latest-arriving cause.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "engine/trace.hpp"

namespace vramsim {

struct PathStep {
  SimTime t = 0;
  std::string kind;    // trace event kind
  std::string what;    // a short description of the event
  std::string waited;  // what the time since the previous step was spent on
};

struct CriticalPath {
  std::string app;
  SimTime requested = 0;
  SimTime running = 0;
  std::vector<PathStep> steps;  // first: the deploy request; last: RUNNING
};

// Whether events of this kind can lie on a path: the graph links these
// alone, so the paths over a trace kept to them are the paths over the
// whole trace.
bool on_critical_paths(TraceKind kind);

// Empty when the app never reached RUNNING.
std::optional<CriticalPath> critical_path(const std::vector<TraceEvent>& events, const std::string& app);
// The same for several apps from one graph (one pass over the trace), in
// the order of `apps`.
std::vector<std::optional<CriticalPath>> critical_paths(const std::vector<TraceEvent>& events,
                                                        const std::vector<std::string>& apps);
void print_critical_path(const CriticalPath& path, std::ostream& out);

}  // namespace vramsim
