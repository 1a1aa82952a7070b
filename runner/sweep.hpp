#pragma once
// A sweep: one scenario run over a grid of parameter values times seeds, one
// CSV row per run (docs/sweeps.md). The grid, the path setting and the slice
// arithmetic are pure; run_sweep runs a range of the grid on a thread pool,
// each run with its own world, and returns the rows in grid order, so the
// bytes never depend on the thread count.
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/trace.hpp"
#include "engine/csv.hpp"
#include "scenario/scenario.hpp"

namespace vramsim {

// Bad sweep input (a --set, --seeds or --slice argument): the message names
// the argument and what was expected.
class SweepError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One --set: a path into the scenario document and the values it takes.
struct SweepParam {
  std::string path;                 // as given: "cluster.max_workers" or "/cluster/max_workers"
  std::vector<std::string> tokens;  // the path's segments
  std::vector<Json> values;
  std::vector<std::string> spelled; // each value as written in the CSV
};

// "path=v1,v2,...". Values are JSON (commas inside [], {} or strings do not
// split); a bare word that is not JSON (legacy, A100-SXM4-80GB) is a string.
SweepParam parse_set(const std::string& arg);
// "a.b.0.c" (dots, numbers index arrays) or "/a/b/0/c" (a JSON pointer,
// ~0 for ~ and ~1 for /).
std::vector<std::string> split_path(const std::string& path);
// Sets the value at `tokens` in `doc`, adding the fields of objects that are
// missing (a field left at its default; the scenario format then judges the
// names). Throws SweepError naming `path` and the step that cannot be taken:
// an array index out of range, or a step into a number, string or boolean.
void set_at_path(Json& doc, const std::vector<std::string>& tokens, const Json& value, const std::string& path);
// "1..100", "7" or "1,5,9": the seeds in the order given.
std::vector<std::uint64_t> parse_seeds(const std::string& text);
// "I/K" with 0 <= I < K.
std::pair<std::size_t, std::size_t> parse_slice(const std::string& text);
// Runs [begin, end) of slice `index` of `count` over `n` runs: contiguous,
// in order, sizes differing by at most one, together all of [0, n).
std::pair<std::size_t, std::size_t> slice_range(std::size_t n, std::size_t index, std::size_t count);

// The grid: the cartesian product of the parameters' values (the last
// parameter varying fastest), each combination run with every seed (seeds
// fastest of all).
struct SweepGrid {
  std::vector<SweepParam> params;
  std::vector<std::uint64_t> seeds;
  std::size_t combinations() const;
  std::size_t size() const { return combinations() * seeds.size(); }
  // The value index of each parameter for combination `c`.
  std::vector<std::size_t> values_of(std::size_t c) const;
  // "path=value path=value" of combination `c`, as the values were written.
  std::string setting_of(std::size_t c) const;
};

// A sweep stopped by its `stop` check (SIGINT, SIGTERM) before every row ran.
class SweepInterrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs in one sweep at most (its rows are held in memory until written).
inline constexpr std::size_t kMaxSweepRuns = 1'000'000;

// The grid's scenarios, parsed once per combination and shared read-only by
// the runs. Throws SweepError ("--set PATH=VALUE: ...") for a path that does
// not exist or a value the scenario format refuses, and for a grid of more
// than kMaxSweepRuns runs.
std::vector<Scenario> expand_scenarios(const Json& doc, const std::string& file, const SweepGrid& grid);

// Combination `c`'s scenario: `doc` with its values set, parsed. Throws
// SweepError ("OPTION path=value ...: " and the scenario format's message).
Scenario scenario_of(const Json& doc, const std::string& file, const SweepGrid& grid, std::size_t c,
                     const std::string& option = "--set");

std::string sweep_csv_header(const SweepGrid& grid);

// Runs rows [begin, end) of the grid on `threads` threads; returns each row
// (with its newline) in grid order. `progress(done, total)` is called, one
// call at a time, after each run. `stop`, where given, is asked before each
// run; once it says true no run starts, the runs in flight finish and
// run_sweep throws SweepInterrupted.
std::vector<std::string> run_sweep(const SweepGrid& grid, const std::vector<Scenario>& scenarios, std::size_t begin,
                                   std::size_t end, unsigned threads,
                                   const std::function<void(std::size_t, std::size_t)>& progress = {},
                                   const std::function<bool()>& stop = {});

// A word for a POSIX shell: single-quoted unless it is plain.
std::string shell_quote(const std::string& word);
// The sbatch script of a sweep as a SLURM job array over slices of `tasks`:
// task I (every I in `indices`, all of 0..tasks-1 when empty) runs `argv`
// (the sweep without -o/--slice) with --slice I/tasks and --checksums into
// `parts_dir`/part-I.csv, its output in `parts_dir`/task-I.log.
std::string sweep_array_script(const std::vector<std::string>& argv, std::size_t tasks, unsigned cpus_per_task,
                               const std::string& parts_dir, const std::vector<std::size_t>& indices = {});
// Why `part` is not `header` followed by exactly `rows` rows, each ending
// in a newline; "" when it is.
std::string part_shape_problem(const std::string& header, const std::string& part, std::size_t rows);
// The CSV of the whole grid from the part files' texts, in slice order:
// each must start with `header` and hold exactly its slice's rows. Throws
// SweepError naming the part that does not.
std::string merge_parts(const std::string& header, const std::vector<std::string>& parts, std::size_t runs,
                        const std::vector<std::string>& part_names);

// The line `sweep` prints when worker jobs reached their time limit while
// serving in any run of its CSV (the jobs_timeout_serving column above 0):
// in how many runs, and the replicas and requests lost. Empty when none.
std::string sweep_time_limit_line(const std::string& csv);

// Worker jobs that reached their time limit while serving, over the runs of
// a sweep or a plan (RunMetrics::jobs_timeout_serving and the two after it).
struct TimeLimitTally {
  std::size_t runs = 0, hit = 0;  // runs counted, and those with such a job
  double jobs = 0, replicas = 0, requests = 0;
  void add(double jobs_timeout_serving, double replicas_lost, double requests_lost);
};
// The one line `sweep` and `plan` print (`tool`: their name); empty when no
// run had such a job.
std::string time_limit_line(const std::string& tool, const TimeLimitTally& t);

}  // namespace vramsim
