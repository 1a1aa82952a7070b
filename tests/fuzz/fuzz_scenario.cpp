// The fuzz target: bytes -> scenario loader -> one simulated run -> summary.
// Any input must end in a ScenarioError or a completed run; anything else
// (another exception, a sanitizer report, a signal) is a crash. Built as a
// libFuzzer target (VRAMSIM_FUZZ) and linked into the replay driver that
// CTest runs over the seed corpus and every regression input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "scenario/scenario.hpp"
#include "observers/requests_csv.hpp"
#include "observers/summary_json.hpp"
#include "runner/simulation.hpp"

namespace {

using namespace vramsim;

// Per-input caps keep each run to milliseconds, so the fuzzer explores
// inputs instead of waiting on long but valid ones.
constexpr std::size_t kMaxInputBytes = 64 * 1024;
constexpr Duration kMaxFuzzHorizon = 6 * kHour;  // <= 21,600 ticks at the 1 s minimum
constexpr std::int64_t kMaxFuzzNodes = 64;
constexpr std::int64_t kMaxFuzzReplicas = 256;

constexpr double kMaxFuzzRequests = 100000;

bool too_big(const Scenario& sc) {
  std::int64_t nodes = 0, replicas = 0;
  for (const auto& t : sc.slurm.nodes) nodes += t.count;
  for (const auto& a : sc.apps) {
    replicas += a.replicas;
    if (a.serve && a.serve->autoscaling) replicas += a.serve->autoscaling->max_replicas;
  }
  // Serving traffic: at most kMaxFuzzRequests arrivals in the capped horizon.
  for (const auto& [app, t] : sc.traffic) {
    const double expected = t.process == TrafficSpec::Process::Trace
                                ? static_cast<double>(t.requests.size())
                                : t.peak_rate() * to_seconds(std::min(sc.horizon, kMaxFuzzHorizon));
    if (expected > kMaxFuzzRequests && !(t.max_requests && static_cast<double>(*t.max_requests) <= kMaxFuzzRequests))
      return true;
  }
  for (const auto& act : sc.actions)
    if (act.app_override) replicas += act.app_override->replicas;
  return nodes > kMaxFuzzNodes || replicas > kMaxFuzzReplicas;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxInputBytes) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Scenario sc;
  try {
    sc = parse_scenario_text(text, "fuzz.json");
  } catch (const ScenarioError&) {
    return 0;  // refused with a message: the expected outcome for bad input
  }
  if (too_big(sc)) return 0;
  if (sc.horizon > kMaxFuzzHorizon) sc.horizon = kMaxFuzzHorizon;
  RunOptions opt;
  opt.outputs.critical_path = true;
  opt.outputs.keep_requests = true;  // every request's record, as run --requests-csv and Python keep them
  const RunResult r = run_scenario(sc, opt);
  std::ostringstream out;
  print_summary(r, out);
  // The records agree with the run's counts, and the summary is written.
  std::uint64_t by_stats[5] = {}, by_records[5] = {};
  for (const auto& o : r.serving) {
    by_stats[static_cast<int>(RequestOutcome::Completed)] += o.completed;
    by_stats[static_cast<int>(RequestOutcome::Refused)] += o.refused;
    by_stats[static_cast<int>(RequestOutcome::TimedOut)] += o.timed_out;
    by_stats[static_cast<int>(RequestOutcome::Failed)] += o.failed;
    by_stats[static_cast<int>(RequestOutcome::Unfinished)] += o.unfinished;
  }
  for (const auto o : r.requests.outcome) ++by_records[static_cast<int>(o)];
  if (r.requests.app.size() != r.requests.size() || !std::equal(by_stats, by_stats + 5, by_records))
    __builtin_trap();
  out << summary_json_text(run_summary(r));
  return 0;
}
