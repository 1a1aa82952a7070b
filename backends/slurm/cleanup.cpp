#include "backends/slurm/cleanup.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "backends/slurm/job_journal.hpp"

namespace vramsim::slurm {

namespace asio = boost::asio;

namespace {

struct Cleanup {
  Cleanup(asio::io_context& io, ProcessRunner& runner, const SlurmClientConfig& cfg)
      : io(io), client(io, runner, cfg), timer(io) {}
  asio::io_context& io;
  SlurmClient client;
  asio::steady_timer timer;
  std::chrono::steady_clock::time_point deadline;
  std::set<std::string> journal_ids;
  std::string run_id;
  CleanupReport report;

  void add_error(const std::string& e) { report.error += (report.error.empty() ? "" : "; ") + e; }

  void start() {
    client.list([this](std::optional<std::vector<SqueueJob>> jobs, std::string error) {
      if (!jobs) return add_error(error);
      for (const auto& j : *jobs)
        if (comment_of_run(j.comment, run_id) || journal_ids.count(j.id) > 0) report.found.push_back(j.id);
      if (report.found.empty()) return;
      client.cancel(report.found, [this](bool ok, std::string error) {
        if (!ok) {
          add_error(error);
          report.still_listed = report.found;
          return;
        }
        report.cancelled = report.found;
        poll();
      });
    });
  }

  void poll() {
    client.list([this](std::optional<std::vector<SqueueJob>> jobs, std::string error) {
      if (!jobs) {
        add_error(error);
        report.still_listed = report.found;
        return;
      }
      std::vector<std::string> left;
      for (const auto& j : *jobs)
        if (std::find(report.found.begin(), report.found.end(), j.id) != report.found.end() &&
            !is_terminal(j.job_state))
          left.push_back(j.id);
      if (left.empty()) return;
      if (std::chrono::steady_clock::now() >= deadline) {
        report.still_listed = left;
        return;
      }
      timer.expires_after(std::chrono::milliseconds(500));
      timer.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) poll();
      });
    });
  }
};

}  // namespace

CleanupReport cleanup_run(const std::string& run_id, const std::string& journal_path,
                          const SlurmClientConfig& cfg, std::chrono::seconds wait) {
  asio::io_context io;
  ProcessRunner runner(io);
  Cleanup c(io, runner, cfg);
  c.run_id = run_id;
  c.deadline = std::chrono::steady_clock::now() + wait;
  if (!journal_path.empty() && std::filesystem::exists(journal_path)) {
    try {
      for (const auto& [run, job] : JobJournal::read(journal_path))
        if (run == run_id) c.journal_ids.insert(job);
    } catch (const std::exception& e) {
      c.add_error(e.what());
    }
  }
  c.start();
  io.run();
  return c.report;
}

}  // namespace vramsim::slurm
