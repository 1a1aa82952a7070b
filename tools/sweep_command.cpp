#include "tools/sweep_command.hpp"
#include "tools/exit_codes.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>
#include <tuple>

#include "engine/output_file.hpp"
#include "runner/sweep.hpp"
#include "tools/slurm_array.hpp"

namespace vramsim {

using namespace cli;  // the shared exit statuses

std::unique_ptr<SweepCommand> add_sweep_command(CLI::App& app) {
  auto c = std::make_unique<SweepCommand>();
  auto* s = app.add_subcommand("sweep", "run a scenario over a grid of parameter values and seeds into a CSV file");
  c->sub = s;
  s->add_option("scenario", c->scenario, "scenario JSON file")->required();
  s->add_option("--set", c->sets,
                "PATH=V1,V2,...: a scenario field (cluster.max_workers or /cluster/max_workers) and the JSON values "
                "it takes (repeatable; the grid is their cartesian product)");
  s->add_option("--seeds", c->seeds, "FIRST..LAST, a seed or seeds separated by commas (default: the scenario's)");
  s->add_option("-o,--output", c->out, "the CSV file to write")->required();
  s->add_option("-j,--jobs", c->jobs, "runs at a time (default: every core)");
  s->add_option("--slice", c->slice, "I/K: run only slice I of K of the grid (rows in grid order)");
  s->add_flag("--on-slurm", c->on_slurm,
              "run the grid as a SLURM job array (sbatch), wait for it, merge the part files into the CSV");
  s->add_option("--tasks", c->tasks, "with --on-slurm: array tasks, each a slice of the grid (default min(runs, 16))");
  s->add_option("--parts-dir", c->parts_dir,
                "with --on-slurm: folder for the part files and task logs, on a file system the nodes share "
                "(default OUT.parts)");
  s->add_option("--poll", c->poll_s, "with --on-slurm: seconds between squeue polls (default 1)");
  return c;
}

namespace {

// A bar redrawn in place on a terminal; elsewhere a line every tenth.
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), tty_(isatty(STDERR_FILENO) == 1) {}
  void update(std::size_t done) {
    if (tty_) {
      // At most a thousand redraws, however many runs.
      if (done != total_ && done * 1000 / total_ == (done - 1) * 1000 / total_) return;
      const std::size_t width = 40, filled = total_ ? done * width / total_ : width;
      std::cerr << "\r[" << std::string(filled, '#') << std::string(width - filled, ' ') << "] " << done << "/"
                << total_ << (done == total_ ? "\n" : "") << std::flush;
    } else if (done == total_ || done * 10 / total_ != (done - 1) * 10 / total_) {
      std::cerr << "sweep: " << done << "/" << total_ << " runs\n";
    }
  }

 private:
  std::size_t total_;
  bool tty_;
};

void write_then_rename(const std::string& out, const std::vector<std::string>& texts) {
  ReplacingFile f(out);
  for (const auto& t : texts) f.write(t);
  f.commit();
}

// Submits the array, waits until squeue no longer lists it, merges the parts.
int run_on_slurm(const SweepCommand& c, const SweepGrid& grid) {
  namespace fs = std::filesystem;
  constexpr int kFailed = 3;
  const std::size_t runs = grid.size();
  const std::size_t tasks = c.tasks ? c.tasks : std::max<std::size_t>(1, std::min<std::size_t>(runs, 16));
  if (tasks > 100000) throw SweepError("--tasks: expected at most 100000 array tasks");
  const std::string parts = fs::absolute(c.parts_dir.empty() ? c.out + ".parts" : c.parts_dir).lexically_normal();
  // sbatch's #SBATCH --output line takes no quoting.
  if (parts.find_first_of(" \t\n%\"'\\") != std::string::npos)
    throw SweepError("--parts-dir '" + parts + "': expected a path without blanks, quotes, backslashes or '%'");
  std::error_code ec;
  fs::create_directories(parts, ec);
  if (ec) {
    std::cerr << "vramsim sweep: cannot create '" << parts << "': " << ec.message() << "\n";
    return kFailed;
  }
  for (std::size_t i = 0; i < tasks; ++i) fs::remove(parts + "/part-" + std::to_string(i) + ".csv", ec);
  // The tasks run this very binary on the same scenario file and grid.
  std::vector<std::string> argv = {fs::read_symlink("/proc/self/exe").string(), "sweep",
                                   fs::absolute(c.scenario).string()};
  for (const auto& set : c.sets) argv.insert(argv.end(), {"--set", set});
  if (!c.seeds.empty()) argv.insert(argv.end(), {"--seeds", c.seeds});
  const unsigned cpus = std::max(1u, c.jobs);
  const std::string script = sweep_array_script(argv, tasks, cpus, parts);
  {
    OutputFile f(parts + "/array.sh");  // what was submitted, for the record
    f.write(script);
    f.close();
  }

  const std::string token = "vramsim-sweep:" + parts;  // --comment: tells our array from any other
  // From the submission on, an interrupt cancels the array: tasks nobody
  // merges would only burn their allocation.
  const InterruptFlag interrupt;
  const ArrayOutcome array = run_job_array(script, token, c.poll_s, "sweep",
                                             std::to_string(runs) + " runs in " + std::to_string(tasks) +
                                                 " task(s), parts in " + parts,
                                             interrupt);
  if (array.status == ArrayOutcome::Status::Interrupted) {
    std::cerr << "vramsim sweep: interrupted; array job " << array.job << " cancelled, no CSV written\n";
    return kInterrupted;
  }
  if (array.status == ArrayOutcome::Status::Failed) {
    std::cerr << "vramsim sweep: " << array.error << "\n";
    return kFailed;
  }
  const std::optional<std::string> job = array.job;
  std::vector<std::string> texts, names;
  for (std::size_t i = 0; i < tasks; ++i) {
    names.push_back(parts + "/part-" + std::to_string(i) + ".csv");
    bool ok = false;
    texts.push_back(fs::is_regular_file(names.back()) ? read_whole_file(names.back(), ok) : std::string());
    if (!ok) {
      std::cerr << "vramsim sweep: array job " << *job << " task " << i << " left no part file " << names.back()
                << " (see " << parts << "/task-" << i << ".log)\n";
      return kFailed;
    }
  }
  std::string merged;
  try {
    merged = merge_parts(sweep_csv_header(grid), texts, runs, names);
  } catch (const SweepError& e) {
    std::cerr << "vramsim sweep: array job " << *job << ": " << e.what() << "\n";
    return kFailed;
  }
  write_then_rename(c.out, {merged});
  std::cerr << "sweep: " << runs << " runs merged from " << tasks << " part(s); written to " << c.out << "\n";
  return 0;
}

}  // namespace

int run_sweep_command(const SweepCommand& c) {
  try {
    // The base file first, with the scenario loader's own messages.
    const Scenario base = load_scenario(c.scenario);
    SweepGrid grid;
    for (const auto& s : c.sets) grid.params.push_back(parse_set(s));
    grid.seeds = c.seeds.empty() ? std::vector<std::uint64_t>{base.seed} : parse_seeds(c.seeds);
    std::size_t begin = 0, end = grid.size();
    if (c.on_slurm && !c.slice.empty()) throw SweepError("--slice and --on-slurm: expected one or the other");
    if (!c.on_slurm && (c.tasks || !c.parts_dir.empty()))
      throw SweepError("--tasks and --parts-dir: expected with --on-slurm only");
    if (!c.slice.empty()) {
      const auto [i, k] = parse_slice(c.slice);
      std::tie(begin, end) = slice_range(grid.size(), i, k);
    }
    std::ifstream in(c.scenario, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const std::vector<Scenario> scenarios = expand_scenarios(Json::parse(text.str()), c.scenario, grid);
    if (c.on_slurm) return run_on_slurm(c, grid);  // checked here, run there

    ReplacingFile out(c.out);  // before the runs: an unwritable path fails at once
    const unsigned threads = c.jobs ? c.jobs : std::max(1u, std::thread::hardware_concurrency());
    Progress progress(end - begin);
    const auto t0 = std::chrono::steady_clock::now();
    const InterruptFlag interrupt;  // stops the sweep; `out` then removes its temporary file
    std::vector<std::string> rows;
    try {
      rows = run_sweep(
          grid, scenarios, begin, end, threads, [&](std::size_t done, std::size_t) { progress.update(done); },
          [&] { return interrupt.raised(); });
    } catch (const SweepInterrupted& e) {
      std::cerr << "\nvramsim sweep: " << e.what() << "; " << c.out << " left as it was\n";
      return kInterrupted;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.write(sweep_csv_header(grid));
    for (const auto& r : rows) out.write(r);
    out.commit();
    std::cerr << "sweep: " << rows.size() << " runs on " << threads << " thread(s) in " << std::fixed
              << std::setprecision(2) << secs << " s; written to " << c.out << "\n";
    return 0;
  } catch (const SweepError& e) {
    std::cerr << "vramsim sweep: " << e.what() << "\n";
    return kInvalid;
  } catch (const ScenarioError& e) {
    std::cerr << "vramsim sweep: invalid scenario: " << e.what() << "\n";
    return kInvalid;
  } catch (const OutputError& e) {
    std::cerr << "vramsim sweep: " << e.what() << "\n";
    return kOutput;
  } catch (const std::exception& e) {
    std::cerr << "vramsim sweep: internal error: " << e.what() << "\n";
    return kInternal;
  }
}

}  // namespace vramsim
