#include "tools/plan_command.hpp"

#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

#include "engine/text.hpp"
#include "analysis/report.hpp"
#include "engine/output_file.hpp"
#include "runner/plan.hpp"
#include "runner/simulation.hpp"
#include "tools/exit_codes.hpp"
#include "tools/option_checks.hpp"
#include "tools/run_command.hpp"
#include "tools/slurm_array.hpp"

namespace vramsim {

using namespace cli;  // the shared exit statuses

std::unique_ptr<PlanCommand> add_plan_command(CLI::App& app) {
  auto c = std::make_unique<PlanCommand>();
  auto* s = app.add_subcommand("plan", "find the cheapest configuration whose SLOs hold across seeds");
  c->sub = s;
  s->add_option("scenario", c->scenario, "scenario JSON file")->required();
  s->add_option("--slo", c->slos, "METRIC<=V, METRIC<V, METRIC>=V or METRIC>V over a run metric (repeatable)")
      ->required();
  s->add_option("--vary", c->vary,
                "PATH=V1,V2,... as sweep --set spells it, or PATH=A..B (integers): a dimension of the space "
                "(repeatable)");
  s->add_option("--monotone", c->monotone,
                "PATH of a --vary whose later values are never worse for the SLOs and never cheaper: binary "
                "search along it (repeatable)");
  s->add_option("--seeds", c->seeds, "FIRST..LAST, a seed or seeds separated by commas (default: the scenario's)")
      ->check(non_empty("seeds"));
  s->add_option("--gpu-price", c->gpu_prices,
                "MODEL=USD: a GPU model's price per GPU-hour for cost_usd, over the scenario's (repeatable)");
  s->add_option("--confidence", c->confidence, "the one-sided bootstrap confidence of each SLO (default 0.95)");
  s->add_option("--objective", c->objective, "the run metric to minimise, its mean over seeds (default cost_usd)")
      ->check(non_empty("a run metric"));
  s->add_option("-o,--output", c->out, "the CSV file to write: one row per configuration evaluated")
      ->check(non_empty("a file path"));
  s->add_option("-j,--jobs", c->jobs, "runs at a time, 1 to 1024 (default: every core; with --on-slurm, CPUs per task)")
      ->check(CLI::Range(1u, 1024u));
  s->add_option("--seed-batch", c->seed_batch, "seeds run at a time per configuration (default 4)");
  s->add_flag("--exhaustive", c->exhaustive,
              "every configuration with every seed: no binary search, pruning or early stop (the grid)");
  s->add_flag("--on-slurm", c->on_slurm, "run each round of the search as a SLURM job array (sbatch)");
  s->add_option("--parts-dir", c->parts_dir,
                "with --on-slurm: folder for the rounds' part files and logs, on a file system the nodes share "
                "(default OUT.parts)");
  s->add_option("--poll", c->poll_s, "with --on-slurm: seconds between squeue polls, 0.05 to 3600 (default 1)")
      ->check(CLI::Range(0.05, 3600.0));
  return c;
}

namespace {

constexpr int kNoneMeets = 1;
constexpr int kFailed = 3;

// A failed SLURM round: the message, already said, and the exit status.
struct RoundFailed {
  int status;
};

// One round's job array script: task I runs `vramsim sweep` on
// configuration I and its seed batch into the part file files[I] (an old one
// removed first).
std::string plan_array_script(const PlanSpec& spec, const std::vector<PlanTask>& tasks, const std::string& exe,
                              const std::string& scenario, const std::string& stem, unsigned cpus,
                              std::vector<std::string>& files) {
  namespace fs = std::filesystem;
  std::string script = "#!/bin/sh\n#SBATCH --job-name=vramsim-plan\n#SBATCH --array=0-" +
                       std::to_string(tasks.size() - 1) + "\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=" +
                       std::to_string(cpus) + "\n#SBATCH --output=" + stem + "-task-%a.log\n" +
                       "case \"$SLURM_ARRAY_TASK_ID\" in\n";
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const auto vi = spec.grid.values_of(tasks[t].combination);
    std::string cmd = "exec " + shell_quote(exe) + " sweep " + shell_quote(scenario);
    for (std::size_t p = 0; p < spec.grid.params.size(); ++p)
      cmd += " --set " + shell_quote(spec.grid.params[p].path + "=" + spec.grid.params[p].spelled[vi[p]]);
    std::string seeds;
    for (auto s : tasks[t].seeds) seeds += (seeds.empty() ? "" : ",") + std::to_string(s);
    files.push_back(stem + "-task-" + std::to_string(t) + ".csv");
    std::error_code gone;
    fs::remove(files.back(), gone);
    cmd += " --seeds " + seeds + " -j " + std::to_string(cpus) + " -o " + shell_quote(files.back());
    script += "  " + std::to_string(t) + ") " + cmd + " ;;\n";
  }
  script += "esac\nexit 2\n";
  return script;
}

// One task's part file: a row per seed, the plan's metrics in `names` order.
// `fail` says what is wrong and throws.
std::vector<std::vector<std::optional<double>>> read_plan_part(const std::string& file,
                                                               const std::vector<std::string>& names, std::size_t rows,
                                                               const std::function<void(const std::string&)>& fail) {
  bool ok = false;
  const std::string text = std::filesystem::is_regular_file(file) ? read_whole_file(file, ok) : std::string();
  if (!ok) fail("left no part file " + file);
  std::istringstream in(text);
  std::vector<std::string> header, cells;
  std::size_t line = 0;
  if (!read_csv_record(in, header, line, file)) fail(file + ": empty");
  std::vector<std::size_t> at;
  for (const auto& n : names) {
    const auto it = std::find(header.begin(), header.end(), n);
    if (it == header.end()) fail(file + ": no column " + n + " (a vramsim of another version?)");
    at.push_back(static_cast<std::size_t>(it - header.begin()));
  }
  std::vector<std::vector<std::optional<double>>> out;
  while (read_csv_record(in, cells, line, file)) {
    if (cells.size() != header.size())
      fail(file + ": line " + std::to_string(line) + ": expected " + std::to_string(header.size()) + " fields");
    std::vector<std::optional<double>> v;
    for (std::size_t k : at) v.push_back(parse_double(cells[k], false));
    out.push_back(std::move(v));
  }
  if (out.size() != rows)
    fail(file + ": expected " + std::to_string(rows) + " row(s), got " + std::to_string(out.size()));
  return out;
}

// Each round of the search as one job array: task I runs `vramsim sweep` on
// one configuration and its seed batch into round-R-task-I.csv.
PlanEvaluator slurm_plan_evaluator(const PlanCommand& c, const PlanSpec& spec, const InterruptFlag& interrupt) {
  namespace fs = std::filesystem;
  const std::string parts =
      fs::absolute(c.parts_dir.empty() ? (c.out.empty() ? std::string("plan") : c.out) + ".parts" : c.parts_dir)
          .lexically_normal();
  if (parts.find_first_of(" \t\n%\"'\\") != std::string::npos)
    throw PlanError("--parts-dir '" + parts + "': expected a path without blanks, quotes, backslashes or '%'");
  std::error_code ec;
  fs::create_directories(parts, ec);
  if (ec) throw PlanError("--parts-dir '" + parts + "': cannot create it: " + ec.message());
  const std::string exe = fs::read_symlink("/proc/self/exe").string();
  const std::string scenario = fs::absolute(c.scenario).string();
  const std::vector<std::string> names = plan_metrics(spec);
  auto round = std::make_shared<std::size_t>(0);
  return [=, &interrupt, &spec](const std::vector<PlanTask>& tasks) {
    const std::size_t r = (*round)++;
    const std::string stem = parts + "/round-" + std::to_string(r);
    const unsigned cpus = std::max(1u, c.jobs);
    std::vector<std::string> files;
    const std::string script = plan_array_script(spec, tasks, exe, scenario, stem, cpus, files);
    {
      OutputFile f(stem + ".sh");  // what was submitted, for the record
      f.write(script);
      f.close();
    }
    const ArrayOutcome a =
        run_job_array(script, "vramsim-plan:" + stem, c.poll_s, "plan",
                      "round " + std::to_string(r + 1) + ": " + std::to_string(tasks.size()) + " configuration(s)",
                      interrupt);
    if (a.status == ArrayOutcome::Status::Interrupted) {
      std::cerr << "vramsim plan: interrupted; array job " << a.job << " cancelled, no CSV written\n";
      throw RoundFailed{kInterrupted};
    }
    if (a.status == ArrayOutcome::Status::Failed) {
      std::cerr << "vramsim plan: " << a.error << "\n";
      throw RoundFailed{kFailed};
    }
    PlanFigures out(tasks.size());
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      const auto fail = [&](const std::string& why) {
        std::cerr << "vramsim plan: array job " << a.job << " task " << t << ": " << why << " (see " << stem
                  << "-task-" << t << ".log)\n";
        throw RoundFailed{kFailed};
      };
      out[t] = read_plan_part(files[t], names, tasks[t].seeds.size(), fail);
    }
    return out;
  };
}

std::string figure(double v) {
  if (std::isinf(v)) return "never";
  std::ostringstream s;
  s << std::setprecision(4) << v;
  return s.str();
}

std::string setting(const PlanSpec& spec, std::size_t c) {
  return spec.grid.params.empty() ? std::string("the scenario as written") : spec.grid.setting_of(c);
}

void print_row(const PlanSpec& spec, const PlanRow& row, std::ostream& out) {
  for (std::size_t k = 0; k < spec.slos.size(); ++k) {
    const Slo& s = spec.slos[k];
    out << "  " << s.metric << ": mean " << figure(row.mean[k]) << ", " << figure(spec.confidence * 100) << " % "
        << (s.upper() ? "upper" : "lower") << " bound " << figure(row.bound[k]) << " over " << row.seeds_run
        << " seed(s) " << (s.holds(row.bound[k]) ? "meets " : "misses ") << s.condition()
        << "\n";
  }
  out << "  " << spec.objective << " (objective): mean " << figure(row.objective) << " over " << row.seeds_run
      << " seed(s)\n";
}

// The search's input from the command line; PlanError names a bad option.
PlanSpec plan_spec(const PlanCommand& c, const Scenario& base) {
  PlanSpec spec;
  for (const auto& v : c.vary) spec.grid.params.push_back(parse_vary(v));
  spec.monotone.assign(spec.grid.params.size(), false);
  for (const auto& m : c.monotone) {
    std::size_t p = 0;
    while (p < spec.grid.params.size() && spec.grid.params[p].path != m) ++p;
    if (p == spec.grid.params.size()) throw PlanError("--monotone " + m + ": expected the path of a --vary");
    spec.monotone[p] = true;
  }
  for (const auto& s : c.slos) spec.slos.push_back(parse_slo_arg(s));
  try {
    spec.grid.seeds = c.seeds.empty() ? std::vector<std::uint64_t>{base.seed} : parse_seeds(c.seeds);
  } catch (const SweepError& e) {
    throw PlanError(e.what());
  }
  spec.objective = c.objective;
  spec.confidence = c.confidence;
  spec.seed_batch = c.seed_batch;
  spec.exhaustive = c.exhaustive;
  validate(spec);
  if (!c.on_slurm && !c.parts_dir.empty()) throw PlanError("--parts-dir: expected with --on-slurm only");
  return spec;
}

// The sharing curves each serving app's answer rests on, where the plan
// does not vary them: the figures move with them (docs/serving.md).
void print_sharing(const PlanSpec& spec, const Scenario& base) {
  for (std::size_t i = 0; i < base.apps.size(); ++i) {
    const AppSpec& a = base.apps[i];
    if (!a.serve) continue;
    auto varied = [&](const char* field) {
      for (const auto& p : spec.grid.params)
        if (p.tokens.size() >= 4 && p.tokens[0] == "apps" && p.tokens[1] == std::to_string(i) &&
            p.tokens[2] == "serve" && p.tokens[3] == field)
          return true;
      return false;
    };
    if (varied("device_sharing") && varied("replica_concurrency")) continue;
    std::cout << "sharing: " << a.id << ": device_sharing " << a.serve->device_sharing.name
              << ", replica_concurrency " << a.serve->replica_concurrency.name << " (--vary apps." << i
              << ".serve.device_sharing=... to see the answer move with them)\n";
  }
}

// The lines that meet the SLOs at no value of the --monotone dimension
// ("apps.0.gpu=T4 at any apps.0.replicas up to 48") and the first SLO its
// last value misses.
void print_hopeless(const PlanSpec& spec, const PlanResult& r) {
  std::size_t m = 0;
  for (std::size_t p = 0; p < spec.monotone.size(); ++p)
    if (spec.monotone[p]) m = p;
  for (std::size_t i : r.hopeless) {
    const PlanRow& row = r.rows[i];
    const auto values = spec.grid.values_of(row.combination);
    std::string others;
    for (std::size_t p = 0; p < spec.grid.params.size(); ++p)
      if (p != m) others += (others.empty() ? "" : " ") + spec.grid.params[p].path + "=" + spec.grid.params[p].spelled[values[p]];
    std::cout << "never meets the SLOs" << (others.empty() ? std::string() : ": " + others) << " at any "
              << spec.grid.params[m].path << " up to " << spec.grid.params[m].spelled[values[m]];
    for (std::size_t k = 0; k < spec.slos.size(); ++k) {
      const Slo& s = spec.slos[k];
      if (s.holds(row.bound[k])) continue;
      std::cout << " (" << s.metric << ": " << figure(spec.confidence * 100) << " % " << (s.upper() ? "upper" : "lower")
                << " bound " << figure(row.bound[k]) << " there, over " << row.seeds_run << " seed(s); the SLO is "
                << s.condition() << ")";
      break;
    }
    std::cout << "\n";
  }
}

// What the search did, the answer and the runner-up (or the closest miss).
void print_plan(const PlanSpec& spec, const PlanResult& r, double secs) {
  std::cout << "plan: " << r.combinations << " configuration(s) x " << spec.grid.seeds.size() << " seed(s); evaluated "
            << r.rows.size() << " configuration(s) in " << r.runs << " run(s) over " << r.rounds
            << " round(s) (the grid: " << r.combinations * spec.grid.seeds.size() << " runs) in " << std::fixed
            << std::setprecision(2) << secs << " s" << std::defaultfloat << "\n";
  std::size_t fails = 0, pruned = 0;
  for (const auto& row : r.rows) {
    fails += row.decision == PlanDecision::CertainFail;
    pruned += row.decision == PlanDecision::Pruned;
  }
  std::cout << "  stopped early: " << fails << " certain to miss an SLO, " << pruned
            << " unable to beat the best found\n";
  print_hopeless(spec, r);
  std::cout << time_limit_line("plan", r.time_limit);
  if (r.chosen) {
    std::cout << "chosen: " << setting(spec, r.rows[*r.chosen].combination) << "\n";
    print_row(spec, r.rows[*r.chosen], std::cout);
    if (r.runner_up) {
      std::cout << "runner-up: " << setting(spec, r.rows[*r.runner_up].combination) << "\n";
      print_row(spec, r.rows[*r.runner_up], std::cout);
    } else {
      std::cout << "runner-up: none among the configurations evaluated\n";
    }
    return;
  }
  std::cout << "no configuration evaluated meets the SLOs";
  if (r.closest) {
    std::cout << "; the closest: " << setting(spec, r.rows[*r.closest].combination) << "\n";
    print_row(spec, r.rows[*r.closest], std::cout);
  } else {
    std::cout << "\n";
  }
}

}  // namespace

int run_plan_command(const PlanCommand& c) {
  try {
    Scenario base = load_scenario(c.scenario);
    std::ifstream in(c.scenario, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    Json doc = Json::parse(text.str());
    if (c.on_slurm && !c.gpu_prices.empty())
      throw PlanError("--gpu-price with --on-slurm: expected the prices in the scenario's "
                      "gpu_prices_usd_per_hour (the array's tasks read the file)");
    const auto prices = put_gpu_prices(c.gpu_prices, "vramsim plan", doc);
    if (!prices) return kInvalid;
    for (const auto& [model, usd] : *prices) base.gpu_prices[model] = usd;
    const PlanSpec spec = plan_spec(c, base);
    std::optional<ReplacingFile> out;
    if (!c.out.empty()) out.emplace(c.out);  // before the runs: an unwritable path fails at once
    const unsigned threads = c.jobs ? c.jobs : std::max(1u, std::thread::hardware_concurrency());
    const InterruptFlag interrupt;
    const PlanEvaluator evaluate =
        c.on_slurm ? slurm_plan_evaluator(c, spec, interrupt) : local_plan_evaluator(doc, c.scenario, spec, threads);
    // Locally, an interrupt is seen between rounds (a round is seconds).
    const PlanEvaluator checked = [&](const std::vector<PlanTask>& tasks) {
      if (interrupt.raised()) {
        std::cerr << "\nvramsim plan: interrupted; no CSV written\n";
        throw RoundFailed{kInterrupted};
      }
      return evaluate(tasks);
    };
    const auto t0 = std::chrono::steady_clock::now();
    PlanResult r;
    try {
      r = run_plan(spec, checked);
    } catch (const RoundFailed& f) {
      return f.status;
    }
    print_plan(spec, r, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    print_sharing(spec, base);
    if (out) {
      out->write(plan_csv(spec, r));
      out->commit();
      std::cout << "written to " << c.out << "\n";
    }
    return r.chosen ? 0 : kNoneMeets;
  } catch (const PlanError& e) {
    std::cerr << "vramsim plan: " << e.what() << "\n";
    return kInvalid;
  } catch (const SweepError& e) {
    std::cerr << "vramsim plan: " << e.what() << "\n";
    return kInvalid;
  } catch (const ScenarioError& e) {
    std::cerr << "vramsim plan: invalid scenario: " << e.what() << "\n";
    return kInvalid;
  } catch (const OutputError& e) {
    std::cerr << "vramsim plan: " << e.what() << "\n";
    return kOutput;
  } catch (const std::exception& e) {
    std::cerr << "vramsim plan: internal error: " << e.what() << "\n";
    return kInternal;
  }
}

}  // namespace vramsim
