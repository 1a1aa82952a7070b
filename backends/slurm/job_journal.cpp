#include "backends/slurm/job_journal.hpp"

#include "backends/slurm/ids.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace vramsim::slurm {

namespace {

std::string errno_text() { return std::strerror(errno); }

}  // namespace

JobJournal::JobJournal(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) throw std::runtime_error("job journal " + path_ + ": cannot open for append: " + errno_text());
}

JobJournal::~JobJournal() {
  if (fd_ >= 0) ::close(fd_);
}

void JobJournal::record(const std::string& run_id, const std::string& job_id) {
  if (!valid_id(run_id) || !valid_id(job_id))
    throw std::invalid_argument("job journal " + path_ + ": run id \"" + run_id + "\" and job id \"" + job_id +
                                "\": " + id_problem(valid_id(run_id) ? job_id : run_id));
  const std::string line = run_id + "\t" + job_id + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("job journal " + path_ + ": write failed: " + errno_text());
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd_) != 0) throw std::runtime_error("job journal " + path_ + ": fsync failed: " + errno_text());
}

std::vector<std::pair<std::string, std::string>> JobJournal::read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("job journal " + path + ": cannot open: " + errno_text());
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw std::runtime_error("job journal " + path + ": read failed");
  const std::string text = ss.str();

  std::vector<std::pair<std::string, std::string>> entries;
  std::size_t start = 0;
  int line_no = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    ++line_no;
    if (end == std::string::npos) break;  // torn last write
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const auto tab = line.find('\t');
    const std::string run = tab == std::string::npos ? "" : line.substr(0, tab);
    const std::string job = tab == std::string::npos ? "" : line.substr(tab + 1);
    if (!valid_id(run) || !valid_id(job))
      throw std::runtime_error(path + ":" + std::to_string(line_no) +
                               ": expected \"<run_id><TAB><job_id>\", got \"" + line.substr(0, 200) + "\"");
    entries.emplace_back(run, job);
  }
  return entries;
}

}  // namespace vramsim::slurm
