#pragma once
// The journal of submitted SLURM jobs: one line per job, written and fsync'd
// as soon as sbatch returns its id, so that `vramsim live --cleanup` can find
// the jobs of a head that died. Format (docs/live-slurm.md):
//   <run_id> TAB <job_id> LF
// Run and job ids are ids (backends/slurm/ids.hpp), so hold no whitespace.
// The file is only appended to; one journal may hold several runs.
#include <string>
#include <utility>
#include <vector>

namespace vramsim::slurm {

class JobJournal {
 public:
  // Opens (creating, mode 0600) for append; throws std::runtime_error naming
  // the path on failure.
  explicit JobJournal(std::string path);
  ~JobJournal();
  JobJournal(const JobJournal&) = delete;
  JobJournal& operator=(const JobJournal&) = delete;

  // Writes one line and fsyncs it; throws std::runtime_error on any write or
  // fsync failure, std::invalid_argument on a run or job id that is not an
  // id (ids.hpp).
  void record(const std::string& run_id, const std::string& job_id);
  const std::string& path() const { return path_; }

  // Every (run_id, job_id) in file order. A last line without its newline is
  // a write torn by a crash and is skipped; any other malformed line throws
  // std::runtime_error "<path>:<line>: ...". An unreadable file throws too.
  static std::vector<std::pair<std::string, std::string>> read(const std::string& path);

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace vramsim::slurm
