#include "tools/slurm_array.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "backends/slurm/process_runner.hpp"
#include "backends/slurm/slurm_client.hpp"
#include "runner/sweep.hpp"

namespace vramsim {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) { g_interrupted = 1; }

// Adds the ended tasks of array `job` to `into`: sacct's word first, where
// accounting is kept (a failing sacct is not asked again), then scontrol's
// for the tasks sacct did not tell.
void collect_endings(boost::asio::io_context& io, slurm::ProcessRunner& runner, const slurm::SlurmClientConfig& cfg,
                     const std::string& job, bool& sacct_usable, std::map<std::size_t, TaskEnding>& into) {
  const auto output_of = [&](std::vector<std::string> argv) -> std::optional<std::string> {
    slurm::CommandSpec spec;
    spec.argv = std::move(argv);
    spec.timeout = cfg.timeout;
    spec.env = cfg.env;
    spec.unset_env_prefixes = cfg.unset_env_prefixes;
    std::optional<std::string> out;
    io.restart();
    runner.run(std::move(spec), [&](slurm::CommandResult r) {
      if (r.ok()) out = std::move(r.out);
    });
    io.run();
    return out;
  };
  if (sacct_usable) {
    const auto out = output_of({cfg.sacct, "-X", "-n", "-P", "-j", job, "-o", "JobID,State,ExitCode"});
    if (!out) sacct_usable = false;
    else
      for (auto& [task, ending] : parse_array_endings(*out, job)) into[task] = ending;
  }
  if (const auto out = output_of({cfg.scontrol, "show", "job", "--oneliner", job}))
    for (auto& [task, ending] : parse_array_endings(*out, job)) into.emplace(task, ending);
}

}  // namespace

std::string read_whole_file(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  ok = static_cast<bool>(in) || in.eof();
  return text.str();
}

InterruptFlag::InterruptFlag() {
  g_interrupted = 0;
  old_int_ = std::signal(SIGINT, on_interrupt);
  old_term_ = std::signal(SIGTERM, on_interrupt);
}

InterruptFlag::~InterruptFlag() {
  std::signal(SIGINT, old_int_);
  std::signal(SIGTERM, old_term_);
}

bool InterruptFlag::raised() const { return g_interrupted != 0; }

ArrayOutcome run_job_array(const std::string& script, const std::string& token, double poll_s, const std::string& who,
                           const std::string& what, const InterruptFlag& interrupt, bool track_tasks) {
  boost::asio::io_context io;
  slurm::ProcessRunner runner(io);
  slurm::SlurmClient client(io, runner, slurm::SlurmClientConfig{});
  ArrayOutcome out;
  std::optional<std::string> job;
  client.submit(script, token, [&](std::optional<std::string> id, std::string err) {
    job = std::move(id);
    out.error = std::move(err);
  });
  io.run();
  if (!job) {
    out.error = "sbatch failed: " + out.error;
    return out;
  }
  out.job = *job;
  std::cerr << who << ": " << what << " as SLURM array job " << *job << "\n";
  // The array's squeue lines at the last poll: "\n" matches none, so the
  // first poll asks, and so does the last (no lines).
  std::string last, last_lines = "\n";
  bool sacct_usable = true;
  for (;;) {
    std::optional<std::vector<slurm::SqueueJob>> listed;
    io.restart();
    client.list([&](std::optional<std::vector<slurm::SqueueJob>> jobs, std::string err) {
      listed = std::move(jobs);
      out.error = std::move(err);
    });
    io.run();
    if (!listed) {
      out.error = "squeue failed: " + out.error + " (array job " + *job + " may still run)";
      return out;
    }
    std::size_t running = 0;
    std::string pending, lines;
    for (const auto& j : *listed) {
      if (j.comment != token) continue;
      lines += j.id + " " + j.state + "\n";
      if (j.job_state == JobState::Pending) pending += (pending.empty() ? "" : " ") + j.id;
      else ++running;
    }
    if (track_tasks && lines != last_lines)
      collect_endings(io, runner, client.config(), *job, sacct_usable, out.endings);
    last_lines = lines;
    if (running == 0 && pending.empty()) break;
    const std::string now = std::to_string(running) + " task(s) running" + (pending.empty() ? "" : ", pending: " + pending);
    if (now != last) std::cerr << who << ": array job " << *job << ": " << now << "\n";
    last = now;
    const auto wake = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(0.05, poll_s));
    while (!interrupt.raised() && std::chrono::steady_clock::now() < wake)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (interrupt.raised()) {
      bool ok = false;
      io.restart();
      client.cancel({*job}, [&](bool o, std::string err) {
        ok = o;
        out.error = std::move(err);
      });
      io.run();
      if (!ok) {
        out.error = "interrupted; scancel " + *job + " failed: " + out.error;
        return out;
      }
      out.status = ArrayOutcome::Status::Interrupted;
      return out;
    }
  }
  out.status = ArrayOutcome::Status::Ended;
  out.error.clear();
  return out;
}

}  // namespace vramsim
