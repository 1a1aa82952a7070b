#include "tools/run_command.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <iostream>
#include <optional>

#include "engine/output_file.hpp"
#include "models/policy_set.hpp"
#include "runner/simulation.hpp"
#include "scenario/scenario.hpp"
#include "tools/option_checks.hpp"
#include "tools/output_options.hpp"
#include "tools/slurm_array.hpp"

namespace vramsim {
namespace {

constexpr int kExitExpectation = 1;
constexpr int kExitInvalidInput = 2;
constexpr int kExitOutput = 3;
constexpr int kExitInternal = 4;

void add_run_options(CLI::App& app, RunCommand& c) {
  c.run = app.add_subcommand("run", "run a scenario and check its expectations");
  CLI::App* run = c.run;
  run->add_option("scenario", c.scenario_path, "scenario JSON file")->required();
  c.run_seed = run->add_option("--seed", c.seed, "override the scenario's seed")->check(cli::seed_value());
  run->add_option("--trace", c.trace_path, "write the trace as JSON Lines to this file")
      ->check(cli::non_empty("a file path"));
  run->add_option("--policies", c.policies, "legacy | fixed | preset,model=variant,... (default: the scenario's)")
      ->check(cli::non_empty("legacy, fixed or preset,model=variant,..."));
  run->add_option("--gpu-price", c.gpu_prices, "MODEL=USD: a GPU model's price per GPU-hour for cost_usd (repeatable)");
  add_output_options(run, c.outputs);
}

void add_compare_options(CLI::App& app, RunCommand& c) {
  c.compare = app.add_subcommand("compare", "run a scenario under legacy, fixed and any mixes, side by side");
  CLI::App* cmp = c.compare;
  cmp->add_option("scenario", c.scenario_path, "scenario JSON file")->required();
  c.compare_seed = cmp->add_option("--seed", c.seed, "override the scenario's seed")->check(cli::seed_value());
  cmp->add_option("--mix", c.mixes, "another policy choice to compare, e.g. fixed,admission=legacy (repeatable)")
      ->check(cli::non_empty("preset,model=variant,..."));
  cmp->add_option("--require", c.required,
                  "a column whose expectations must all hold for exit 0: legacy, fixed or a --mix "
                  "(repeatable; default fixed)");
}

// --gpu-price MODEL=USD, over the scenario's gpu_prices_usd_per_hour; false
// (with the message said) when one is invalid.
bool apply_gpu_prices(const std::vector<std::string>& prices, Scenario& sc) {
  const auto parsed = parse_gpu_prices(prices, "vramsim");
  if (!parsed) return false;
  for (const auto& [model, usd] : *parsed) sc.gpu_prices[model] = usd;
  return true;
}

// `run`'s options as RunOptions; false (with the message said) when one is invalid.
bool run_options(const RunCommand& c, RunOptions& opt) {
  if (*c.run_seed) opt.seed = c.seed;
  if (!c.policies.empty()) {
    try {
      parse_policy_spec(c.policies);
    } catch (const UnknownPolicyError& e) {
      std::cerr << "vramsim: --policies: " << e.what() << "\n";
      return false;
    }
    opt.policies = c.policies;
  }
  opt.outputs.trace_path = c.trace_path;
  return parse_output_options(c.outputs, "run", opt.outputs);
}

int run_one(const RunCommand& c, const Scenario& sc) {
  RunOptions opt;
  if (!run_options(c, opt)) return kExitInvalidInput;
  const RunResult r = run_scenario(sc, opt);
  print_summary(r, std::cout);
  // run_scenario returns only after every output file was closed intact.
  print_written(opt.outputs, std::cerr);
  return r.all_held() ? 0 : kExitExpectation;
}

int run_compare(const RunCommand& c, const Scenario& sc) {
  std::vector<std::string> specs = {"legacy", "fixed"};
  for (const auto& m : c.mixes) {
    try {
      parse_policy_spec(m);
    } catch (const UnknownPolicyError& e) {
      std::cerr << "vramsim: --mix: " << e.what() << "\n";
      return kExitInvalidInput;
    }
    specs.push_back(m);
  }
  std::vector<std::string> required = c.required;
  if (required.empty()) required.push_back("fixed");
  std::vector<std::size_t> required_runs;
  for (const auto& col : required) {
    auto it = std::find(specs.begin(), specs.end(), col);
    if (it == specs.end()) {
      std::cerr << "vramsim: --require: expected legacy, fixed or one of the --mix values, got '" << col << "'\n";
      return kExitInvalidInput;
    }
    required_runs.push_back(static_cast<std::size_t>(it - specs.begin()));
  }
  std::vector<RunResult> runs;
  for (const auto& s : specs) {
    RunOptions opt;
    if (*c.compare_seed) opt.seed = c.seed;
    opt.policies = s;
    runs.push_back(run_scenario(sc, opt));
  }
  print_comparison(runs, std::cout, required_runs);
  // The required columns decide the exit status, as `run` does for one.
  for (std::size_t i : required_runs)
    if (!runs[i].all_held()) return kExitExpectation;
  return 0;
}

}  // namespace

std::optional<std::map<std::string, double>> parse_gpu_prices(const std::vector<std::string>& prices,
                                                             const std::string& command) {
  std::map<std::string, double> out;
  for (const auto& p : prices) {
    const auto eq = p.find('=');
    const std::string model = eq == std::string::npos ? "" : p.substr(0, eq);
    double usd = -1;
    if (eq != std::string::npos) {
      const std::string v = p.substr(eq + 1);
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), usd);
      if (ec != std::errc() || end != v.data() + v.size() || v.empty() || !std::isfinite(usd)) usd = -1;
    }
    if (model.empty() || !gpu_catalogue().count(model) || usd < 0 || usd > 10000) {
      std::cerr << command << ": --gpu-price '" << p << "': expected MODEL=USD with a GPU model of the partition "
                << "catalogue and a price in [0, 10000] per GPU-hour\n";
      return std::nullopt;
    }
    out[model] = usd;
  }
  return out;
}

std::optional<std::map<std::string, double>> put_gpu_prices(const std::vector<std::string>& prices,
                                                           const std::string& command, Json& doc) {
  auto parsed = parse_gpu_prices(prices, command);
  if (parsed)
    for (const auto& [model, usd] : *parsed) doc["gpu_prices_usd_per_hour"][model] = usd;
  return parsed;
}

std::unique_ptr<RunCommand> add_run_commands(CLI::App& app) {
  auto c = std::make_unique<RunCommand>();
  add_run_options(app, *c);
  add_compare_options(app, *c);
  return c;
}

int run_run_commands(const RunCommand& c) {
  try {
    Scenario sc = load_scenario(c.scenario_path);
    for (const auto& w : sc.warnings) std::cerr << "vramsim: warning: " << w << "\n";
    if (!apply_gpu_prices(c.gpu_prices, sc)) return kExitInvalidInput;
    return c.run->parsed() ? run_one(c, sc) : run_compare(c, sc);
  } catch (const ScenarioError& e) {
    std::cerr << "vramsim: invalid scenario: " << e.what() << "\n";
    return kExitInvalidInput;
  } catch (const CLI::ValidationError& e) {
    std::cerr << "vramsim: " << e.what() << "\n";
    return kExitInvalidInput;
  } catch (const OutputError& e) {
    std::cerr << "vramsim: " << e.what() << "\n";
    return kExitOutput;
  } catch (const std::exception& e) {
    std::cerr << "vramsim: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

}  // namespace vramsim
