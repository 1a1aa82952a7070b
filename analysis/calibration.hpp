#pragma once
// Calibration: the phases of one or more traces (simulated or live) fitted
// to latency models (models/latency_fit.hpp) and written as a model file a
// scenario loads with "latency": {"from": FILE} (docs/calibration.md).
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/trace.hpp"
#include "models/latency_fit.hpp"

namespace vramsim {

struct PhaseFit {
  std::string phase;  // a cluster.latency field name
  LatencyFit fit;
};

struct Calibration {
  std::vector<std::string> traces;
  std::size_t min_samples = kMinFitSamples;
  std::vector<PhaseFit> phases;         // fitted, in calibrated_phases() order
  std::vector<std::string> unobserved;  // phases no trace showed: not written
  std::vector<std::string> notes;
};

// A phase observed fewer than min_samples times (names the phase and count).
class CalibrationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Fits every phase the traces show. Throws CalibrationError when a phase has
// samples but fewer than min_samples, or none is observed at all.
Calibration calibrate(const std::vector<std::vector<TraceEvent>>& traces, const std::vector<std::string>& names,
                      std::size_t min_samples = kMinFitSamples);

// The model file: {"format", "traces", "criterion", "min_samples", "notes",
// "latency": {phase: scenario latency entry}, "fit": {phase: details}}.
Json calibration_json(const Calibration& c);
// A chosen model as a scenario's cluster.latency entry (durations in seconds).
Json latency_entry(const LatencyModel& m);

}  // namespace vramsim
