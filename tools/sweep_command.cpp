#include "tools/sweep_command.hpp"
#include "tools/exit_codes.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>
#include <tuple>

#include "engine/output_file.hpp"
#include "runner/sweep.hpp"
#include "runner/sweep_parts.hpp"
#include "tools/run_command.hpp"
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
  s->add_option("--gpu-price", c->gpu_prices,
                "MODEL=USD: a GPU model's price per GPU-hour for cost_usd, over the scenario's (repeatable)");
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
  s->add_flag("--resume", c->resume,
              "with --on-slurm: keep the parts of the parts folder that match this build, scenario and grid; "
              "run only the missing, failed or stale slices, then merge");
  s->add_flag("--merge-only", c->merge_only,
              "with --on-slurm: submit nothing; merge the parts folder (a missing or stale slice is an error)");
  s->add_flag("--checksums", c->checksums,
              "with --slice: also write OUT.sum, the checksums of this binary, the scenario, the grid and OUT "
              "(what --on-slurm's tasks leave beside their parts)");
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

// A slice's record beside its part (OUT.sum), written once the part is: so a
// part without one is a part its task did not finish.
void write_part_stamp(const SweepCommand& c, const std::string& scenario_sum, const std::string& csv,
                      std::size_t rows) {
  const auto binary = file_sha256("/proc/self/exe");
  if (!binary) throw std::runtime_error("cannot read /proc/self/exe to checksum this binary");
  PartStamp s;
  s.binary = *binary;
  s.scenario = scenario_sum;
  s.grid = grid_arguments(c.sets, c.seeds);
  std::tie(s.slice, s.slices) = parse_slice(c.slice);
  s.rows = rows;
  s.csv = sha256_hex(csv);
  write_then_rename(stamp_file(c.out), {format_part_stamp(s)});
}

// The number of slices the records in `parts` were made for: that of the
// lowest-numbered part's readable record; nullopt where none is.
std::optional<std::size_t> recorded_slices(const std::string& parts) {
  namespace fs = std::filesystem;
  std::optional<std::pair<std::size_t, std::size_t>> first;  // slice, slices
  std::error_code ec;
  for (fs::directory_iterator it(parts, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("part-", 0) != 0 || name.size() < 9 || name.compare(name.size() - 8, 8, ".csv.sum") != 0) continue;
    bool ok = false;
    const std::string text = read_whole_file(it->path().string(), ok);
    const auto stamp = ok ? parse_part_stamp(text) : std::nullopt;
    if (stamp && (!first || stamp->slice < first->first)) first = {{stamp->slice, stamp->slices}};
  }
  if (!first) return std::nullopt;
  return first->second;
}

// A file's text; nullopt where it is not a regular file or cannot be read.
std::optional<std::string> text_of(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) return std::nullopt;
  bool ok = false;
  std::string text = read_whole_file(path, ok);
  if (!ok) return std::nullopt;
  return text;
}

// The part files of one sweep on SLURM, and what each must have been made by.
struct SliceParts {
  std::string dir;
  std::size_t tasks = 0, runs = 0;
  PartStamp expected;
  std::string header;
  std::vector<std::optional<std::string>> texts;  // each part's text, as last checked

  PartCheck check(std::size_t i) {
    const std::string part = part_file(dir, i);
    texts[i] = text_of(part);
    expected.slice = i;
    return check_part(texts[i], text_of(stamp_file(part)), expected, header, runs);
  }
};

constexpr int kSlurmFailed = 3;

// The slices to run: all of them, or under --resume and --merge-only those
// whose part is missing or bad (--merge-only: none may be; kSlurmFailed).
std::optional<int> slices_to_run(const SweepCommand& c, SliceParts& sp, std::vector<std::size_t>& rerun) {
  if (!c.resume && !c.merge_only) {
    for (std::size_t i = 0; i < sp.tasks; ++i) rerun.push_back(i);
    return std::nullopt;
  }
  std::vector<PartCheck> checks;
  for (std::size_t i = 0; i < sp.tasks; ++i) checks.push_back(sp.check(i));
  rerun = slices_to_rerun(checks);
  if (c.merge_only && !rerun.empty()) {
    const std::size_t i = rerun.front();
    std::cerr << "vramsim sweep: --merge-only: slice " << i << " of " << sp.tasks << ": " << part_file(sp.dir, i)
              << ": " << checks[i].why << "\n";
    return kSlurmFailed;
  }
  if (c.resume)
    std::cerr << "sweep: --resume: " << sp.tasks - rerun.size() << " of " << sp.tasks << " slice(s) reused, "
              << rerun.size() << " to rerun" << (rerun.empty() ? "" : ": " + array_spec(rerun)) << "\n";
  return std::nullopt;
}

// Runs the slices in `rerun` as one array job and waits for it; its id goes
// to `job`. Nonzero: the exit status.
int run_slices(const SweepCommand& c, const SliceParts& sp, const std::vector<std::size_t>& rerun, std::string& job) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(sp.dir, ec);
  if (ec) {
    std::cerr << "vramsim sweep: cannot create '" << sp.dir << "': " << ec.message() << "\n";
    return kSlurmFailed;
  }
  for (std::size_t i : rerun) {
    fs::remove(part_file(sp.dir, i), ec);
    fs::remove(stamp_file(part_file(sp.dir, i)), ec);
  }
  // The tasks run this very binary on the same scenario file and grid.
  std::vector<std::string> argv = {fs::read_symlink("/proc/self/exe").string(), "sweep",
                                   fs::absolute(c.scenario).string()};
  for (const auto& set : c.sets) argv.insert(argv.end(), {"--set", set});
  if (!c.seeds.empty()) argv.insert(argv.end(), {"--seeds", c.seeds});
  const std::string script = sweep_array_script(argv, sp.tasks, std::max(1u, c.jobs), sp.dir, rerun);
  {
    OutputFile f(sp.dir + "/array.sh");  // what was submitted, for the record
    f.write(script);
    f.close();
  }
  const std::string token = "vramsim-sweep:" + sp.dir;  // --comment: tells our array from any other
  // From the submission on, an interrupt cancels the array: tasks nobody
  // merges would only burn their allocation.
  const InterruptFlag interrupt;
  const ArrayOutcome array =
      run_job_array(script, token, c.poll_s, "sweep",
                    std::to_string(sp.runs) + " runs in " + std::to_string(sp.tasks) + " slice(s), " +
                        std::to_string(rerun.size()) + " task(s), parts in " + sp.dir,
                    interrupt, true);
  if (array.status == ArrayOutcome::Status::Interrupted) {
    std::cerr << "vramsim sweep: interrupted; array job " << array.job << " cancelled, no CSV written\n";
    return kInterrupted;
  }
  if (array.status == ArrayOutcome::Status::Failed) {
    std::cerr << "vramsim sweep: " << array.error << "\n";
    return kSlurmFailed;
  }
  job = array.job;
  for (std::size_t i : rerun) {
    const auto e = array.endings.find(i);
    std::cerr << "sweep: array job " << job << " " << task_state_line(i, e == array.endings.end() ? nullptr : &e->second)
              << "\n";
  }
  return 0;
}

// Checks every part again and merges them into the CSV.
int merge_slices(const SweepCommand& c, SliceParts& sp, const std::vector<std::size_t>& rerun, const std::string& job) {
  std::vector<std::string> bodies, names;
  for (std::size_t i = 0; i < sp.tasks; ++i) {
    names.push_back(part_file(sp.dir, i));
    const PartCheck got = sp.check(i);
    const bool ran = std::find(rerun.begin(), rerun.end(), i) != rerun.end();
    const std::string log = ran ? " (see " + sp.dir + "/task-" + std::to_string(i) + ".log)" : "";
    if (got.state == PartCheck::State::Missing && ran) {
      std::cerr << "vramsim sweep: array job " << job << " task " << i << " left no part file " << names.back() << log
                << "\n";
      return kSlurmFailed;
    }
    if (got.state != PartCheck::State::Good) {
      std::cerr << "vramsim sweep: " << names.back() << ": " << got.why << log << "\n";
      return kSlurmFailed;
    }
    bodies.push_back(*sp.texts[i]);
  }
  std::string merged;
  try {
    merged = merge_parts(sp.header, bodies, sp.runs, names);
  } catch (const SweepError& e) {
    std::cerr << "vramsim sweep: " << e.what() << "\n";
    return kSlurmFailed;
  }
  write_then_rename(c.out, {merged});
  std::cerr << "sweep: " << sp.runs << " runs merged from " << sp.tasks << " part(s)";
  if (c.resume) std::cerr << " (" << sp.tasks - rerun.size() << " reused, " << rerun.size() << " rerun)";
  std::cerr << "; written to " << c.out << "\n" << sweep_time_limit_line(merged);
  return 0;
}

// Submits the slices that need a run as an array, waits until squeue no
// longer lists it, merges the parts. `scenario_sum`: the scenario file's
// SHA-256.
int run_on_slurm(const SweepCommand& c, const SweepGrid& grid, const std::string& scenario_sum) {
  namespace fs = std::filesystem;
  SliceParts sp;
  sp.runs = grid.size();
  sp.dir = fs::absolute(c.parts_dir.empty() ? c.out + ".parts" : c.parts_dir).lexically_normal();
  // sbatch's #SBATCH --output line takes no quoting.
  if (sp.dir.find_first_of(" \t\n%\"'\\") != std::string::npos)
    throw SweepError("--parts-dir '" + sp.dir + "': expected a path without blanks, quotes, backslashes or '%'");
  sp.tasks = c.tasks;
  if (!sp.tasks && (c.resume || c.merge_only)) sp.tasks = recorded_slices(sp.dir).value_or(0);
  if (!sp.tasks) sp.tasks = std::max<std::size_t>(1, std::min<std::size_t>(sp.runs, 16));
  if (sp.tasks > 100000) throw SweepError("--tasks: expected at most 100000 array tasks");
  const std::optional<std::string> binary = file_sha256("/proc/self/exe");
  if (!binary) throw std::runtime_error("cannot read /proc/self/exe to checksum this binary");
  // What every part of this sweep must have been made by.
  sp.expected.binary = *binary;
  sp.expected.scenario = scenario_sum;
  sp.expected.grid = grid_arguments(c.sets, c.seeds);
  sp.expected.slices = sp.tasks;
  sp.header = sweep_csv_header(grid);
  sp.texts.resize(sp.tasks);

  std::vector<std::size_t> rerun;
  if (const auto status = slices_to_run(c, sp, rerun)) return *status;
  std::string job;
  if (!rerun.empty())
    if (const int status = run_slices(c, sp, rerun, job)) return status;
  return merge_slices(c, sp, rerun, job);
}

}  // namespace

int run_sweep_command(const SweepCommand& c) {
  // Ctrl-C from the start: one during the set-up (a long grid takes seconds
  // to expand) is seen before the first run, not lost to the default action.
  const InterruptFlag interrupt;
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
    if (!c.on_slurm && (c.resume || c.merge_only))
      throw SweepError(std::string(c.resume ? "--resume" : "--merge-only") +
                       ": expected with --on-slurm (and the --parts-dir of the sweep to take up)");
    if (c.resume && c.merge_only) throw SweepError("--resume and --merge-only: expected one or the other");
    if (c.checksums && c.slice.empty()) throw SweepError("--checksums: expected with --slice only");
    if (!c.slice.empty()) {
      const auto [i, k] = parse_slice(c.slice);
      std::tie(begin, end) = slice_range(grid.size(), i, k);
    }
    std::ifstream in(c.scenario, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    Json doc = Json::parse(text.str());
    if (c.on_slurm && !c.gpu_prices.empty())
      throw SweepError("--gpu-price with --on-slurm: expected the prices in the scenario's "
                       "gpu_prices_usd_per_hour (the array's tasks read the file)");
    if (!put_gpu_prices(c.gpu_prices, "vramsim sweep", doc)) return kInvalid;
    const std::vector<Scenario> scenarios = expand_scenarios(doc, c.scenario, grid);
    const std::string scenario_sum = sha256_hex(text.str());
    if (c.on_slurm) return run_on_slurm(c, grid, scenario_sum);  // checked here, run there

    ReplacingFile out(c.out);  // before the runs: an unwritable path fails at once
    const unsigned threads = c.jobs ? c.jobs : std::max(1u, std::thread::hardware_concurrency());
    Progress progress(end - begin);
    const auto t0 = std::chrono::steady_clock::now();
    if (interrupt.raised()) {
      std::cerr << "vramsim sweep: interrupted before the first run; " << c.out << " left as it was\n";
      return kInterrupted;
    }
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
    std::string csv = sweep_csv_header(grid);
    for (const auto& r : rows) csv += r;
    out.write(csv);
    out.commit();
    if (c.checksums) write_part_stamp(c, scenario_sum, csv, rows.size());
    std::cerr << "sweep: " << rows.size() << " runs on " << threads << " thread(s) in " << std::fixed
              << std::setprecision(2) << secs << " s; written to " << c.out << "\n";
    std::cerr << sweep_time_limit_line(csv);
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
