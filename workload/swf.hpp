#pragma once
// The Standard Workload Format of the Parallel Workloads Archive (SWF 2.2):
// one job per line, 18 whitespace-separated numeric fields, -1 for unknown;
// lines starting with ';' are comments, some of them "; Key: value" header
// fields. vramsim also reads an optional 19th field, GPUs per node (SWF has
// no GPU column). docs/workloads.md says which fields vramsim uses.
//
// Cost: one pass over the file, O(lines) time; the jobs are held in memory
// (160 bytes each: 1e6 jobs take about 160 MB).
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/huge_page_allocator.hpp"

namespace vramsim {

// Bad trace input: names the file, the line, the column (field name) and
// what was expected. vramsim exits 2 on it, as on any invalid input.
class WorkloadError : public std::runtime_error {
 public:
  WorkloadError(std::string file, std::size_t line, std::string column, std::string problem)
      : std::runtime_error(file + (line ? ":" + std::to_string(line) : std::string()) + ": " + column + ": " + problem),
        file_(std::move(file)), line_(line), column_(std::move(column)), problem_(std::move(problem)) {}
  const std::string& file() const { return file_; }
  std::size_t line() const { return line_; }  // 1-based; 0 when not about one line
  const std::string& column() const { return column_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string file_;
  std::size_t line_;
  std::string column_, problem_;
};

// One SWF job. Every field is as the file has it: -1 means unknown.
struct SwfJob {
  std::int64_t id = -1;
  // Times in the trace's ticks (SwfTrace::ticks_per_second; seconds in SWF).
  std::int64_t submit = -1;     // from the start of the log
  std::int64_t wait = -1;       // in the queue, as recorded
  std::int64_t run_time = -1;
  std::int64_t alloc_procs = -1;
  double avg_cpu_time = -1;     // seconds; may be fractional
  double used_memory = -1;      // KB per processor; may be fractional
  std::int64_t req_procs = -1;
  std::int64_t req_time = -1;   // the user's time limit
  std::int64_t req_memory = -1; // KB per processor
  std::int64_t status = -1;     // 1 completed, 0 failed, 5 cancelled, ...
  std::int64_t user = -1, group = -1, executable = -1, queue = -1, partition = -1;
  std::int64_t preceding_job = -1, think_time = -1;
  // GPUs on each of its nodes (SLURM's --gres=gpu:N): vramsim's 19th SWF
  // field, or Batsim's "gres"; -1: none stated.
  std::int64_t gpus_per_node = -1;
  std::size_t line = 0;         // where it was read, for later messages
};

// The header: "; Key: value" comment lines. Informational in SWF, so a
// value is kept as its text; MaxProcs and MaxNodes are also read as the
// number they start with ("; MaxNodes: 400 (48 interactive, ...)").
struct SwfHeader {
  std::optional<std::int64_t> max_procs, max_nodes;
  std::vector<std::pair<std::string, std::string>> fields;  // key, value text; in file order
};

// A list of batch jobs: read from SWF, or from another format into the
// same fields (workload/batsim.hpp).
struct SwfTrace {
  std::string file;
  SwfHeader header;
  // In file order; partial executions left out. Huge pages: a large trace
  // is many megabytes of jobs, touched once.
  std::vector<SwfJob, HugePageAllocator<SwfJob>> jobs;
  // Lines of status 2, 3 or 4: the partial executions of a checkpointed or
  // swapped job, whose summary line (status 0, 1 or 5) is the job (SWF 2.2).
  std::size_t partial_lines = 0;
  // Header lines read with a problem (a MaxProcs with no number, ...): one
  // line each, "file:line: Key: what", for the caller to print. Comments
  // never refuse a log.
  std::vector<std::string> warnings;
  // The source kills a job at its requested time (Batsim's walltime); in
  // SWF the recorded run time is what happened, so it is replayed whole.
  bool kill_at_req_time = false;
  // The unit of every time field (submit, wait, run_time, req_time): ticks
  // per second. SWF's times are whole seconds (1); Batsim's are real
  // numbers, kept to the millisecond (1000).
  std::int64_t ticks_per_second = 1;
};

// What a replay takes of a job (docs/workloads.md): its allocated
// processors, else the requested ones (<= 0: unknown); the user's requested
// time as the scheduler's estimate, else the run time; a kill at the
// requested time only where the trace asks for one (Batsim walltimes).
inline std::int64_t replay_procs(const SwfJob& j) { return j.alloc_procs > 0 ? j.alloc_procs : j.req_procs; }
inline std::int64_t replay_estimate(const SwfJob& j) { return j.req_time > 0 ? j.req_time : j.run_time; }
inline std::optional<std::int64_t> replay_time_limit(const SwfTrace& trace, const SwfJob& j) {
  if (trace.kill_at_req_time && j.req_time > 0) return j.req_time;
  return std::nullopt;
}

// The 18 field names, in column order, as the error messages spell them.
extern const std::array<std::string_view, 18> kSwfFields;
// vramsim's optional 19th field (docs/workloads.md) and its range; Batsim's
// "gres" takes the same range.
extern const std::string_view kSwfGpusField;
constexpr std::int64_t kMaxSwfGpusPerNode = 64;

// Parses SWF text; `file` names it in errors. Reads at most `limit` jobs
// (0: all). Throws WorkloadError on the first malformed line.
SwfTrace parse_swf(std::string_view text, const std::string& file, std::size_t limit = 0);
// Reads (workload/workload_file.hpp) and parses a file; an unreadable file
// or a folder is a WorkloadError too.
SwfTrace load_swf(const std::string& path, std::size_t limit = 0);

}  // namespace vramsim
