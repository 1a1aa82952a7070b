#include "tools/run_command.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <iostream>
#include <optional>

#include "engine/output_file.hpp"
#include "models/policy_set.hpp"
#include "runner/run_outputs.hpp"
#include "runner/simulation.hpp"
#include "scenario/scenario.hpp"
#include "tools/option_checks.hpp"
#include "tools/slurm_array.hpp"

namespace vramsim {
namespace {

constexpr int kExitExpectation = 1;
constexpr int kExitInvalidInput = 2;
constexpr int kExitOutput = 3;
constexpr int kExitInternal = 4;

std::vector<Duration> parse_times(const std::vector<std::string>& in, const std::string& option) {
  std::vector<Duration> out;
  for (const auto& s : in) {
    auto d = parse_duration(s);
    if (!d || *d > limits::kMaxDuration)
      throw CLI::ValidationError(option, "expected a duration such as 200s or 5m, up to " +
                                             format_duration(limits::kMaxDuration) + ", got '" + s + "'");
    out.push_back(*d);
  }
  return out;
}

void add_run_options(CLI::App& app, RunCommand& c) {
  c.run = app.add_subcommand("run", "run a scenario and check its expectations");
  CLI::App* run = c.run;
  run->add_option("scenario", c.scenario_path, "scenario JSON file")->required();
  c.run_seed = run->add_option("--seed", c.seed, "override the scenario's seed")->check(cli::seed_value());
  run->add_option("--trace", c.trace_path, "write the trace as JSON Lines to this file")
      ->check(cli::non_empty("a file path"));
  run->add_option("--policies", c.policies, "legacy | fixed | preset,model=variant,... (default: the scenario's)")
      ->check(cli::non_empty("legacy, fixed or preset,model=variant,..."));
  run->add_option("--status-at", c.status_at, "print the cluster status at this time (repeatable)");
  run->add_option("--status-json", c.status_json,
                  "status snapshots as a JSON array (default with --status-at: status.json)")
      ->check(cli::non_empty("a file path"));
  run->add_option("--status-every", c.status_every, "sample the status timeline with this period")
      ->check(cli::non_empty("a duration such as 10s"));
  run->add_option("--status-csv", c.status_csv, "timeline CSV file (default status-timeline.csv)")
      ->check(cli::non_empty("a file path"));
  run->add_option("--gpu-price", c.gpu_prices, "MODEL=USD: a GPU model's price per GPU-hour for cost_usd (repeatable)");
  run->add_option("--serve-timeline", c.serve_timeline, "serving timeline CSV: requests and replicas per window")
      ->check(cli::non_empty("a file path"));
  run->add_option("--serve-window", c.serve_window, "the serving timeline's window (default 60s)")
      ->check(cli::non_empty("a duration such as 60s"));
  run->add_option("--frag-csv", c.frag_csv,
                  "one row per deployed app: arrived GPU demand, GPUs allocated, unallocated and fragmented (FGD)")
      ->check(cli::non_empty("a file path"));
  run->add_option("--frag-nodes-csv", c.frag_nodes_csv, "with --frag-csv: each GPU node's fragmentation at the end")
      ->check(cli::non_empty("a file path"));
  run->add_option("--chrome-trace", c.chrome_trace_path,
                  "write the run in Chrome Trace Event format (Perfetto) to this file")
      ->check(cli::non_empty("a file path"));
  run->add_flag("--critical-path", c.critical_path, "explain each app's time to RUNNING, step by step");
  run->add_option("--summary-json", c.summary_json,
                  "write the run's metrics as JSON, by the sweep CSV's column names (docs/python.md)")
      ->check(cli::non_empty("a file path"));
  run->add_option("--requests-csv", c.requests_csv,
                  "write every request: app, arrival, start, end, replica, cold, outcome (docs/serving.md)")
      ->check(cli::non_empty("a file path"));
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

// A period option, bounded below so that a run writes at most horizon / 1 s
// rows; nullopt (with the message said) when invalid.
std::optional<Duration> period(const std::string& option, const std::string& text, const char* example) {
  auto d = parse_duration(text);
  if (!d || *d < limits::kMinPeriod || *d > limits::kMaxDuration) {
    std::cerr << "vramsim: " << option << ": expected a duration from " << format_duration(limits::kMinPeriod)
              << " to " << format_duration(limits::kMaxDuration) << " such as " << example << ", got '" << text
              << "'\n";
    return std::nullopt;
  }
  return d;
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
  opt.trace_path = c.trace_path;
  opt.status_at = parse_times(c.status_at, "--status-at");
  if (!c.status_every.empty()) {
    opt.status_every = period("--status-every", c.status_every, "10s");
    if (!opt.status_every) return false;
  }
  // --status-at writes the JSON beside the printed lines.
  opt.status_json_path = c.status_json.empty() && !c.status_at.empty() ? "status.json" : c.status_json;
  if (!c.status_csv.empty()) opt.status_csv_path = c.status_csv;
  opt.critical_path = c.critical_path;
  opt.chrome_trace_path = c.chrome_trace_path;
  opt.serve_timeline_path = c.serve_timeline;
  if (!c.frag_nodes_csv.empty() && c.frag_csv.empty()) {
    std::cerr << "vramsim run: --frag-nodes-csv needs --frag-csv\n";
    return false;
  }
  opt.frag_csv_path = c.frag_csv;
  opt.frag_nodes_csv_path = c.frag_nodes_csv;
  opt.requests_csv_path = c.requests_csv;
  if (!c.serve_window.empty()) {
    const auto w = period("--serve-window", c.serve_window, "60s");
    if (!w) return false;
    opt.serve_window = *w;
  }
  return true;
}

int run_one(const RunCommand& c, const Scenario& sc) {
  RunOptions opt;
  if (!run_options(c, opt)) return kExitInvalidInput;
  // Opened before the run: an unwritable path fails at once.
  std::optional<ReplacingFile> summary;
  if (!c.summary_json.empty()) summary.emplace(c.summary_json);
  const RunResult r = run_scenario(sc, opt);
  if (summary) {
    summary->write(summary_json_text(run_summary(r)));
    summary->commit();
  }
  print_summary(r, std::cout);
  // File notes go to stderr so that stdout is the same wherever it runs.
  // run_scenario returns only after every output file was closed intact.
  if (!opt.status_json_path.empty()) std::cerr << "status JSON written to " << opt.status_json_path << "\n";
  if (opt.status_every) std::cerr << "status timeline written to " << opt.status_csv_path << "\n";
  if (!opt.chrome_trace_path.empty()) std::cerr << "Chrome trace written to " << opt.chrome_trace_path << "\n";
  if (!opt.frag_csv_path.empty()) std::cerr << "fragmentation per arrival written to " << opt.frag_csv_path << "\n";
  if (!opt.frag_nodes_csv_path.empty())
    std::cerr << "fragmentation per node written to " << opt.frag_nodes_csv_path << "\n";
  if (!opt.serve_timeline_path.empty()) std::cerr << "serving timeline written to " << opt.serve_timeline_path << "\n";
  if (summary) std::cerr << "summary JSON written to " << c.summary_json << "\n";
  if (!opt.requests_csv_path.empty()) std::cerr << "requests written to " << opt.requests_csv_path << "\n";
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
