#pragma once
// --summary-json and Python's `summary`: the run's metrics by the sweep
// CSV's column names (scenario/run_metrics.hpp), with the scenario, the
// policies, the seed and the expectations' tally. docs/python.md.
#include <optional>
#include <string>

#include "engine/output_file.hpp"
#include "observers/run_observer.hpp"

namespace vramsim {

// {"scenario", "policies", "seed", every run metric (null: not measured),
// "expectations_held", "expectations", "all_held"}.
Json run_summary(const RunResult& r);
// The summary as JSON text: numbers in their shortest round-trip spelling;
// +inf (a percentile whose rank falls on a request that never completed)
// as 1e999, which JSON readers take as infinity (Python's json,
// JavaScript) or the largest double.
std::string summary_json_text(const Json& summary);

class SummaryJson final : public RunObserver {
 public:
  // Opened now, so that an unwritable path fails before the run; replaced
  // only once whole.
  explicit SummaryJson(const std::string& path) : file_(path) {}
  void publish(const RunResult& result) override;

 private:
  ReplacingFile file_;
};

}  // namespace vramsim
