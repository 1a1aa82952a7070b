#pragma once
// A run's result as `vramsim run`, `live` and `compare` print it: per app
// admitted or rejected, time to RUNNING and reservation; the jobs, what was
// left, the background load and GPU use; what stayed pending; the serving
// apps' requests and cost; status lines, critical paths and every
// expectation.
#include <ostream>
#include <string>
#include <vector>

#include "observers/run_result.hpp"

namespace vramsim {

void print_summary(const RunResult& r, std::ostream& out);
// Side-by-side table of several runs of one scenario.
// `required`: indices of the runs whose failed expectations are listed
// under the table.
void print_comparison(const std::vector<RunResult>& runs, std::ostream& out,
                      const std::vector<std::size_t>& required = {});

// The line `run` prints when worker jobs reached their time limit while
// serving (RunMetrics::jobs_timeout_serving > 0): how many, the replicas and
// requests lost with them.
std::string time_limit_note(const RunMetrics& m);

// "1.25s", or "never" for an infinite one, "-" for none.
std::string format_latency(std::optional<double> s);
// The serving apps' request table of the summary.
void print_serve_table(const std::vector<ServeOutcome>& apps, std::ostream& out);

}  // namespace vramsim
