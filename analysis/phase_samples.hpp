#pragma once
// Per-phase latency samples from a trace (simulated or live), named after
// the scenario's `cluster.latency` fields they calibrate. Each sample is the
// span between two events of one job, or of one replica:
//   queue_wait           job_submitted -> job_started (warm workers left out)
//   node_boot            job_started -> node_advertised
//   registration         node_advertised -> node_registered
//   runtime_env_install  replica_placed -> replica_running of the first
//                        replica of an app on a node (install + init; see
//                        below)
//   replica_init         replica_placed -> replica_running of a replica
//                        placed once the app's env on that node existed
//   ray_stop             node_stop_requested -> node_lost (reason ray stop)
//   cancel               job_cancel_requested -> job_ended CANCELLED, for
//                        jobs that had started (a queued job leaves at once)
//   job_exit_after_stop  node_lost (ray stop) -> job_ended COMPLETED
// The first replica's span is the install plus its own init; where the
// traces hold replica_init samples too, their median is taken off each
// install sample (split_runtime_env), else the sum stays in
// runtime_env_install and replica_init is not observed.
#include <map>
#include <string>
#include <vector>

#include "engine/trace.hpp"

namespace vramsim {

struct PhaseSamples {
  std::map<std::string, std::vector<Duration>> samples;  // phase -> spans, in trace order
  // phase -> right-censored spans: the phase began and was cut off before it
  // ended (a queue wait whose job was cancelled before it started).
  std::map<std::string, std::vector<Duration>> censored;
  std::vector<std::string> notes;                        // how ambiguous spans were read
};

// The phases in the order of a worker's life; also the latency field names.
const std::vector<std::string>& calibrated_phases();

// Appends the phases of one trace to `into`.
void extract_phase_samples(const std::vector<TraceEvent>& trace, PhaseSamples& into);
// Once every trace is in: takes the median replica init off each install
// sample when both were observed (clamped at 0), noting it.
void split_runtime_env(PhaseSamples& s);

}  // namespace vramsim
