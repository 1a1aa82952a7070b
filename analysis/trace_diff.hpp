#pragma once
// `vramsim diff`: two traces of one scenario (a simulated and a live run, or
// two runs of either) aligned by app and phase. Per phase, the duration in
// each trace side by side; and the first event where the sequences of event
// kinds diverge, ignoring kinds only one world writes. The start of
// calibration: which phase the simulation gets wrong, and by how much.
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "engine/trace.hpp"

namespace vramsim {

// Reads a JSON Lines trace; throws ScenarioError-like std::runtime_error
// naming the file and line of a malformed event.
std::vector<TraceEvent> read_trace(const std::string& path);
// Traces longer than this (about 31 years) are refused.
constexpr SimTime kMaxTraceTime = 1'000'000'000'000'000;
// The same from a stream; `name` stands for the file in messages.
std::vector<TraceEvent> parse_trace(std::istream& in, const std::string& name);

struct PhaseRow {
  std::string scope;   // app id, or "run"
  std::string phase;   // "queue wait", "boot + registration", ...
  std::optional<Duration> a, b;
};

struct Divergence {
  std::size_t index = 0;                // position in the filtered kind sequences
  std::optional<TraceEvent> a, b;       // nullopt: that trace ended first
};

struct TraceDiff {
  std::vector<PhaseRow> phases;
  std::optional<Divergence> divergence;  // none: the same kinds in the same order
  std::size_t compared = 0;              // events compared after filtering
};

// Kinds one world writes and the other cannot (agent channel, squeue errors,
// signals, status snapshots), left out of the sequence comparison.
bool world_specific_kind(TraceKind kind);

// Each app's first deploy request and first RUNNING after it, apps in the
// order of their first request (events whose `app` is not a string are
// skipped): what "time to RUNNING" measures everywhere.
struct AppToRunning {
  std::string app;
  SimTime requested = 0;
  std::optional<SimTime> running;
};
// The same, one event at a time (a run's observers): add each
// deploy_requested and app_state event in trace order.
class DeployToRunning {
 public:
  void add(const TraceEvent& e);
  const std::vector<AppToRunning>& apps() const { return out_; }

 private:
  std::vector<AppToRunning> out_;
  std::map<std::string, std::size_t> index_;
};
std::vector<AppToRunning> deploy_to_running(const std::vector<TraceEvent>& events);

// Milestones per app (from its deploy request) and per run.
std::vector<PhaseRow> phase_durations(const std::vector<TraceEvent>& a, const std::vector<TraceEvent>& b);
TraceDiff diff_traces(const std::vector<TraceEvent>& a, const std::vector<TraceEvent>& b);
void print_trace_diff(const TraceDiff& d, const std::string& label_a, const std::string& label_b, std::ostream& out);

}  // namespace vramsim
