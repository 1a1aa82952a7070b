#include "tools/sweep_command.hpp"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>
#include <tuple>

#include "engine/output_file.hpp"
#include "runner/sweep.hpp"

namespace vramsim {

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
  return c;
}

namespace {

// A bar redrawn in place on a terminal; elsewhere a line every tenth.
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), tty_(isatty(STDERR_FILENO) == 1) {}
  void update(std::size_t done) {
    if (tty_) {
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

}  // namespace

int run_sweep_command(const SweepCommand& c) {
  constexpr int kInvalid = 2, kOutput = 3, kInternal = 4;
  try {
    // The base file first, with the scenario loader's own messages.
    const Scenario base = load_scenario(c.scenario);
    SweepGrid grid;
    for (const auto& s : c.sets) grid.params.push_back(parse_set(s));
    grid.seeds = c.seeds.empty() ? std::vector<std::uint64_t>{base.seed} : parse_seeds(c.seeds);
    std::size_t begin = 0, end = grid.size();
    if (!c.slice.empty()) {
      const auto [i, k] = parse_slice(c.slice);
      std::tie(begin, end) = slice_range(grid.size(), i, k);
    }
    std::ifstream in(c.scenario, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const std::vector<Scenario> scenarios = expand_scenarios(Json::parse(text.str()), c.scenario, grid);

    OutputFile out(c.out);  // before the runs: an unwritable path fails at once
    const unsigned threads = c.jobs ? c.jobs : std::max(1u, std::thread::hardware_concurrency());
    Progress progress(end - begin);
    const auto t0 = std::chrono::steady_clock::now();
    const auto rows = run_sweep(grid, scenarios, begin, end, threads,
                                [&](std::size_t done, std::size_t) { progress.update(done); });
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.write(sweep_csv_header(grid));
    for (const auto& r : rows) out.write(r);
    out.close();
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
