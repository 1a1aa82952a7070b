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

}  // namespace

ReplacingFile::ReplacingFile(std::string out) : out_(std::move(out)), tmp_(sweep_temp_path(out_)), file_(tmp_) {}

ReplacingFile::~ReplacingFile() {
  if (!done_) std::remove(tmp_.c_str());  // an error or an interrupt: the old file stays
}

void ReplacingFile::commit() {
  file_.close();
  if (std::rename(tmp_.c_str(), out_.c_str()) != 0) {
    const int err = errno;
    throw OutputError(out_, "cannot rename " + tmp_ + " to it: " + std::strerror(err));
  }
  done_ = true;
}

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
                           const std::string& what,
                           const InterruptFlag& interrupt) {
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
  std::string last;
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
    std::string pending;
    for (const auto& j : *listed) {
      if (j.comment != token) continue;
      if (j.job_state == JobState::Pending) pending += (pending.empty() ? "" : " ") + j.id;
      else ++running;
    }
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
