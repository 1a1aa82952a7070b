#pragma once
// The part files of a sweep run as a SLURM job array (docs/sweeps.md, "On
// SLURM"): the record each task leaves beside its part (PART.sum), whether a
// part can be merged as it is, which slices a resumed sweep runs again, and
// the array tasks' final states as sacct or scontrol tell them. All pure but
// the file hash.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vramsim {

// SHA-256, 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);
// Of a file's bytes; nullopt where it cannot be read to its end.
std::optional<std::string> file_sha256(const std::string& path);

// What a part's record says: the build, the scenario and the grid that made
// it, its slice, and its own bytes.
struct PartStamp {
  std::string binary;    // SHA-256 of the vramsim executable's bytes
  std::string scenario;  // SHA-256 of the scenario file's bytes
  std::string grid;      // the grid's arguments, grid_arguments()
  std::size_t slice = 0, slices = 1;
  std::size_t rows = 0;  // the part's rows, the header not counted
  std::string csv;       // SHA-256 of the part file's bytes
};
// "vramsim-sweep-part 1", then one "key value" line per field.
std::string format_part_stamp(const PartStamp& s);
// nullopt: not such a record (another first line, a field missing or bad).
std::optional<PartStamp> parse_part_stamp(const std::string& text);
// The arguments that define the grid, as one line: each "--set PATH=VALUES",
// then "--seeds SEEDS" where given, shell-quoted.
std::string grid_arguments(const std::vector<std::string>& sets, const std::string& seeds);
// PARTS/part-I.csv, and its record beside it.
std::string part_file(const std::string& parts_dir, std::size_t slice);
std::string stamp_file(const std::string& part);

// Whether a part can be merged as slice expected.slice of expected.slices.
struct PartCheck {
  enum class State { Good, Missing, Stale } state = State::Good;
  std::string why;  // Missing, Stale: what is wrong, in a few words
};
// `csv` and `stamp` are the texts of the part and of its record, nullopt
// where the file is not there. Good when the record is this build's
// (`expected.binary`), of this scenario file and grid and of this slice, and
// the part is the bytes it records, the sweep's header and its slice's rows.
PartCheck check_part(const std::optional<std::string>& csv, const std::optional<std::string>& stamp,
                     const PartStamp& expected, const std::string& header, std::size_t runs);
// The slices whose part is not Good, in order.
std::vector<std::size_t> slices_to_rerun(const std::vector<PartCheck>& checks);
// SLURM's --array list of sorted, distinct indices: "0-4", "1,3-5".
std::string array_spec(const std::vector<std::size_t>& indices);

// An array task's final state.
struct TaskEnding {
  std::string state;      // SLURM's name: COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
  std::string exit_code;  // "EXIT:SIGNAL" as SLURM writes it; "" where not told
};
// The tasks of array job `job` that have ended, from the output of
// `sacct -X -n -P -j JOB -o JobID,State,ExitCode` (lines "JOB_I|STATE|EXIT")
// or of `scontrol show job --oneliner JOB` (lines with ArrayJobId=JOB
// ArrayTaskId=I JobState= ExitCode=); tasks still pending or running, and
// lines of other jobs, are left out.
std::map<std::size_t, TaskEnding> parse_array_endings(const std::string& out, const std::string& job);
// "task 3: COMPLETED", "task 1: FAILED (exit 1)", "task 2: CANCELLED
// (signal 15)"; "task 4: unknown" where nothing told (null).
std::string task_state_line(std::size_t task, const TaskEnding* ending);

}  // namespace vramsim
