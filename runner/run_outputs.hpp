#pragma once
// A run's machine-readable outputs, the same for the command line and the
// Python module (docs/python.md): the summary (every metric a sweep CSV row
// has, by the same names) and every request's path as CSV.
#include <string>

#include "engine/trace.hpp"
#include "runner/simulation.hpp"

namespace vramsim {

// {"scenario", "policies", "seed", every RunMetrics::for_each metric (null:
// not measured), "expectations_held", "expectations", "all_held"}.
Json run_summary(const RunResult& r);
// The summary as JSON text (`run --summary-json`): numbers in their
// shortest round-trip spelling; +inf (a percentile whose rank falls on a
// request that never completed) as 1e999, which JSON readers take as
// infinity (Python's json, JavaScript) or the largest double.
std::string summary_json_text(const Json& summary);

// `run --requests-csv`: app,arrival_s,start_s,end_s,replica,cold,outcome,
// one row per request in arrival order; start_s, end_s and replica empty
// where there is none (RequestRecords).
inline constexpr const char* kRequestsCsvHeader = "app,arrival_s,start_s,end_s,replica,cold,outcome\n";
void write_requests_csv(const RequestRecords& records, const std::string& path);  // throws OutputError

}  // namespace vramsim
