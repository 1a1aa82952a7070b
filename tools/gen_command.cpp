#include "tools/gen_command.hpp"
#include "tools/option_checks.hpp"
#include "tools/exit_codes.hpp"

#include <fstream>
#include <sstream>
#include <iostream>

namespace vramsim {

using namespace cli;  // the shared exit statuses

std::unique_ptr<GenCommand> add_gen_command(CLI::App& app) {
  auto c = std::make_unique<GenCommand>();
  auto* g = app.add_subcommand("gen", "write a synthetic scenario (N apps on a partition of GPU nodes)");
  c->sub = g;
  g->add_option("--apps", c->opts.apps, "number of apps (default 100)");
  g->add_option("--replicas", c->replicas, "replica counts to draw from, value[:weight],... (default 1,2,4)");
  g->add_option("--sizes", c->sizes,
                "gpu_memory_mb per replica to draw from, value[:weight],...; -1 a whole GPU "
                "(default 2000,4000,8000,16000,-1)");
  g->add_option("--arrival", c->opts.arrival, "fixed | poisson (default fixed)");
  g->add_option("--interval", c->interval, "time between deploys, or its mean for poisson (default 2s)");
  g->add_option("--first-deploy", c->first_deploy, "time of the first deploy (default 10s)");
  g->add_option("--nodes", c->opts.nodes, "partition nodes (default apps/2, at least 1)");
  g->add_option("--gpus-per-node", c->opts.gpus_per_node, "GPUs per node (default 4)");
  g->add_option("--gpu", c->gpus, "GPU model(s), comma-separated; nodes split evenly (default A100-SXM4-80GB)");
  g->add_option("--max-workers", c->opts.max_workers, "max_workers (default the node count)");
  g->add_option("--min-workers", c->opts.min_workers, "min_workers: scale-down stops there (default 0)");
  g->add_option("--initial-workers", c->opts.initial_workers, "workers already up at t=0 (default 0)");
  g->add_option("--worker-cpus", c->worker_cpus, "worker_defaults.cpus (default: the scenario default)");
  g->add_option("--worker-gpus", c->worker_gpus, "worker_defaults.gpus (default: the scenario default)");
  g->add_option("--horizon", c->horizon, "simulated time to run (default 48h)");
  g->add_option("--shutdown-at", c->shutdown_at, "time of the shutdown action, or 'none' (default 40h)");
  g->add_option("--seed", c->opts.seed, "seed of the draws and of the scenario (default 1)")->check(cli::seed_value());
  g->add_option("--name", c->opts.name, "scenario name (default derived from the knobs)");
  g->add_option("-o,--output", c->out, "write here instead of stdout");
  return c;
}

int run_gen_command(GenCommand& c) {
  auto fail = [](const std::string& msg) {
    std::cerr << "vramsim gen: " << msg << "\n";
    return kInvalid;
  };
  GeneratorOptions& o = c.opts;
  auto list = [&](const std::string& text, const char* knob, std::vector<Weighted>& into) {
    auto v = parse_weighted_list(text);
    if (!v) return std::string(knob) + ": expected value[:weight],... such as 1,2,4 or 2000:3,-1:1, got '" + text + "'";
    into = *v;
    return std::string();
  };
  auto duration = [&](const std::string& text, const char* knob, Duration& into) {
    auto d = parse_duration(text);
    if (!d) return std::string(knob) + ": expected a duration such as 2s, 5m or 48h, got '" + text + "'";
    into = *d;
    return std::string();
  };
  for (const std::string& err :
       {list(c.replicas, "--replicas", o.replicas), list(c.sizes, "--sizes", o.sizes),
        duration(c.interval, "--interval", o.interval), duration(c.first_deploy, "--first-deploy", o.first_deploy),
        duration(c.horizon, "--horizon", o.horizon)})
    if (!err.empty()) return fail(err);
  if (c.shutdown_at == "none") {
    o.shutdown_at.reset();
  } else {
    Duration at = 0;
    if (auto err = duration(c.shutdown_at, "--shutdown-at", at); !err.empty()) return fail(err + " or none");
    o.shutdown_at = at;
  }
  o.gpu_models.clear();
  std::stringstream ss(c.gpus);
  for (std::string m; std::getline(ss, m, ',');) o.gpu_models.push_back(m);
  if (c.sub->count("--worker-cpus")) o.worker_cpus = c.worker_cpus;
  if (c.sub->count("--worker-gpus")) o.worker_gpus = c.worker_gpus;
  if (auto err = validate(o); !err.empty()) return fail(err);

  const std::string text = generate_scenario(o).dump(1) + "\n";
  if (c.out.empty() || c.out == "-") {
    std::cout << text << std::flush;
    if (!std::cout) {
      std::cerr << "vramsim gen: writing to stdout failed\n";
      return kOutput;
    }
    return 0;
  }
  std::ofstream f(c.out, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) {
    std::cerr << "vramsim gen: cannot write '" << c.out << "'\n";
    return kOutput;
  }
  return 0;
}

}  // namespace vramsim
