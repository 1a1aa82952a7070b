// vramsim: run a scenario in simulation and check its expectations.
// Exit status: 0 every expectation held, 1 one failed, 2 invalid input
// (scenario or arguments), 3 an output file could not be written, 4 an
// internal error (a bug: please report the scenario).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <charconv>
#include <cmath>
#include <iostream>

#include "engine/output_file.hpp"

#include "models/policy_set.hpp"
#include "models/registry.hpp"
#include "scenario/scenario.hpp"
#include "runner/simulation.hpp"
#include "tools/live_commands.hpp"
#include "tools/gen_command.hpp"
#include "tools/report_command.hpp"
#include "tools/option_checks.hpp"
#include "tools/replay_command.hpp"
#include "tools/sweep_command.hpp"
#include "tools/plan_command.hpp"
#include "tools/calibrate_command.hpp"
#include "tools/explain_command.hpp"

using namespace vramsim;

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"vramsim: a discrete-event simulator of a SLURM-backed, VRAM-packed GPU serving cluster"};
  app.require_subcommand(1);

  std::string scenario_path, trace_path, policies, status_json, status_csv, status_every;
  std::vector<std::string> status_at, mixes;
  std::uint64_t seed = 0;

  auto* run = app.add_subcommand("run", "run a scenario and check its expectations");
  run->add_option("scenario", scenario_path, "scenario JSON file")->required();
  auto* seed_opt = run->add_option("--seed", seed, "override the scenario's seed")->check(cli::seed_value());
  run->add_option("--trace", trace_path, "write the trace as JSON Lines to this file")->check(cli::non_empty("a file path"));
  run->add_option("--policies", policies, "legacy | fixed | preset,model=variant,... (default: the scenario's)")
      ->check(cli::non_empty("legacy, fixed or preset,model=variant,..."));
  run->add_option("--status-at", status_at, "print the cluster status at this time (repeatable)");
  run->add_option("--status-json", status_json, "status snapshots as a JSON array (default with --status-at: status.json)")
      ->check(cli::non_empty("a file path"));
  run->add_option("--status-every", status_every, "sample the status timeline with this period")
      ->check(cli::non_empty("a duration such as 10s"));
  run->add_option("--status-csv", status_csv, "timeline CSV file (default status-timeline.csv)")
      ->check(cli::non_empty("a file path"));
  std::string serve_timeline, serve_window;
  std::vector<std::string> gpu_prices;
  run->add_option("--gpu-price", gpu_prices, "MODEL=USD: a GPU model's price per GPU-hour for cost_usd (repeatable)");
  run->add_option("--serve-timeline", serve_timeline, "serving timeline CSV: requests and replicas per window")
      ->check(cli::non_empty("a file path"));
  run->add_option("--serve-window", serve_window, "the serving timeline's window (default 60s)")
      ->check(cli::non_empty("a duration such as 60s"));
  std::string frag_csv, frag_nodes_csv;
  run->add_option("--frag-csv", frag_csv,
                  "one row per deployed app: arrived GPU demand, GPUs allocated, unallocated and fragmented (FGD)")
      ->check(cli::non_empty("a file path"));
  run->add_option("--frag-nodes-csv", frag_nodes_csv, "with --frag-csv: each GPU node's fragmentation at the end")
      ->check(cli::non_empty("a file path"));
  std::string chrome_trace_path;
  run->add_option("--chrome-trace", chrome_trace_path, "write the run in Chrome Trace Event format (Perfetto) to this file")
      ->check(cli::non_empty("a file path"));
  bool show_critical_path = false;
  run->add_flag("--critical-path", show_critical_path, "explain each app's time to RUNNING, step by step");

  auto* cmp = app.add_subcommand("compare", "run a scenario under legacy, fixed and any mixes, side by side");
  cmp->add_option("scenario", scenario_path, "scenario JSON file")->required();
  auto* cmp_seed = cmp->add_option("--seed", seed, "override the scenario's seed")->check(cli::seed_value());
  cmp->add_option("--mix", mixes, "another policy choice to compare, e.g. fixed,admission=legacy (repeatable)")
      ->check(cli::non_empty("preset,model=variant,..."));
  std::vector<std::string> required;
  cmp->add_option("--require", required,
                  "a column whose expectations must all hold for exit 0: legacy, fixed or a --mix "
                  "(repeatable; default fixed)");

  auto* list = app.add_subcommand("policies", "list the policy models and their variants");
  LiveCommands live_commands(app);
  auto gen = add_gen_command(app);
  auto report = add_report_command(app);
  auto replay = add_replay_command(app);
  auto sweep = add_sweep_command(app);
  auto plan = add_plan_command(app);
  auto calibrate = add_calibrate_command(app);
  auto explain = add_explain_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, like every other input error (CLI11's own adds a second).
    std::cerr << "vramsim: " << e.what() << "\n";
    return kExitInvalidInput;
  }

  if (auto code = live_commands.run()) return *code;
  if (gen->sub->parsed()) return run_gen_command(*gen);
  if (report->sub->parsed()) return run_report_command(*report);
  if (replay->sub->parsed()) return run_replay_command(*replay);
  if (sweep->sub->parsed()) return run_sweep_command(*sweep);
  if (plan->sub->parsed()) return run_plan_command(*plan);
  if (calibrate->sub->parsed()) return run_calibrate_command(*calibrate);
  if (explain->sub->parsed()) return run_explain_command(*explain);
  if (list->parsed()) {
    auto& reg = PolicyRegistry::instance();
    for (const auto& m : reg.models()) {
      std::cout << m << ":";
      for (const auto& v : reg.variants(m)) std::cout << " " << v;
      std::cout << "\n";
    }
    return 0;
  }

  try {
    Scenario sc = load_scenario(scenario_path);
    for (const auto& w : sc.warnings) std::cerr << "vramsim: warning: " << w << "\n";
    // --gpu-price MODEL=USD, over the scenario's gpu_prices_usd_per_hour.
    for (const auto& p : gpu_prices) {
      const auto eq = p.find('=');
      const std::string model = eq == std::string::npos ? "" : p.substr(0, eq);
      double usd = -1;
      if (eq != std::string::npos) {
        const std::string v = p.substr(eq + 1);
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), usd);
        if (ec != std::errc() || end != v.data() + v.size() || v.empty() || !std::isfinite(usd)) usd = -1;
      }
      if (model.empty() || !gpu_catalogue().count(model) || usd < 0 || usd > 10000) {
        std::cerr << "vramsim: --gpu-price '" << p << "': expected MODEL=USD with a GPU model of the partition "
                  << "catalogue and a price in [0, 10000] per GPU-hour\n";
        return kExitInvalidInput;
      }
      sc.gpu_prices[model] = usd;
    }
    if (run->parsed()) {
      RunOptions opt;
      if (*seed_opt) opt.seed = seed;
      if (!policies.empty()) {
        try {
          parse_policy_spec(policies);
        } catch (const UnknownPolicyError& e) {
          std::cerr << "vramsim: --policies: " << e.what() << "\n";
          return kExitInvalidInput;
        }
        opt.policies = policies;
      }
      opt.trace_path = trace_path;
      opt.status_at = parse_times(status_at, "--status-at");
      // A period option, bounded below so that a run writes at most
      // horizon / 1 s rows; nullopt (with the message said) when invalid.
      auto period = [](const std::string& option, const std::string& text, const char* example) {
        auto d = parse_duration(text);
        if (!d || *d < limits::kMinPeriod || *d > limits::kMaxDuration) {
          std::cerr << "vramsim: " << option << ": expected a duration from " << format_duration(limits::kMinPeriod)
                    << " to " << format_duration(limits::kMaxDuration) << " such as " << example << ", got '" << text
                    << "'\n";
          return std::optional<Duration>();
        }
        return d;
      };
      if (!status_every.empty()) {
        opt.status_every = period("--status-every", status_every, "10s");
        if (!opt.status_every) return kExitInvalidInput;
      }
      // --status-at writes the JSON beside the printed lines.
      opt.status_json_path = status_json.empty() && !status_at.empty() ? "status.json" : status_json;
      if (!status_csv.empty()) opt.status_csv_path = status_csv;
      opt.critical_path = show_critical_path;
      opt.chrome_trace_path = chrome_trace_path;
      opt.serve_timeline_path = serve_timeline;
      if (!frag_nodes_csv.empty() && frag_csv.empty()) {
        std::cerr << "vramsim run: --frag-nodes-csv needs --frag-csv\n";
        return kExitInvalidInput;
      }
      opt.frag_csv_path = frag_csv;
      opt.frag_nodes_csv_path = frag_nodes_csv;
      if (!serve_window.empty()) {
        const auto w = period("--serve-window", serve_window, "60s");
        if (!w) return kExitInvalidInput;
        opt.serve_window = *w;
      }
      const RunResult r = run_scenario(sc, opt);
      print_summary(r, std::cout);
      // File notes go to stderr so that stdout is the same wherever it runs.
      // run_scenario returns only after every output file was closed intact.
      if (!opt.status_json_path.empty()) std::cerr << "status JSON written to " << opt.status_json_path << "\n";
      if (opt.status_every)
        std::cerr << "status timeline written to " << opt.status_csv_path << "\n";
      if (!opt.chrome_trace_path.empty()) std::cerr << "Chrome trace written to " << opt.chrome_trace_path << "\n";
      if (!opt.frag_csv_path.empty()) std::cerr << "fragmentation per arrival written to " << opt.frag_csv_path << "\n";
      if (!opt.frag_nodes_csv_path.empty())
        std::cerr << "fragmentation per node written to " << opt.frag_nodes_csv_path << "\n";
      if (!opt.serve_timeline_path.empty())
        std::cerr << "serving timeline written to " << opt.serve_timeline_path << "\n";
      return r.all_held() ? 0 : kExitExpectation;
    }
    std::vector<std::string> specs = {"legacy", "fixed"};
    for (const auto& m : mixes) {
      try {
        parse_policy_spec(m);
      } catch (const UnknownPolicyError& e) {
        std::cerr << "vramsim: --mix: " << e.what() << "\n";
        return kExitInvalidInput;
      }
      specs.push_back(m);
    }
    if (required.empty()) required.push_back("fixed");
    std::vector<std::size_t> required_runs;
    for (const auto& c : required) {
      auto it = std::find(specs.begin(), specs.end(), c);
      if (it == specs.end()) {
        std::cerr << "vramsim: --require: expected legacy, fixed or one of the --mix values, got '" << c << "'\n";
        return kExitInvalidInput;
      }
      required_runs.push_back(static_cast<std::size_t>(it - specs.begin()));
    }
    std::vector<RunResult> runs;
    for (const auto& s : specs) {
      RunOptions opt;
      if (*cmp_seed) opt.seed = seed;
      opt.policies = s;
      runs.push_back(run_scenario(sc, opt));
    }
    print_comparison(runs, std::cout, required_runs);
    // The required columns decide the exit status, as `run` does for one.
    for (std::size_t i : required_runs)
      if (!runs[i].all_held()) return kExitExpectation;
    return 0;
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
