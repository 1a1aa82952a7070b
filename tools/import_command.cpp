#include "tools/import_command.hpp"

#include <iostream>

#include "engine/output_file.hpp"
#include "scenario/ray_serve_config.hpp"
#include "tools/exit_codes.hpp"

namespace vramsim {

using namespace cli;  // the shared exit statuses

std::unique_ptr<ImportCommand> add_import_commands(CLI::App& app) {
  auto c = std::make_unique<ImportCommand>();
  c->import_sub = app.add_subcommand("import", "write a scenario from a deployment described elsewhere");
  c->import_sub->require_subcommand(1);
  auto* rs = c->import_sub->add_subcommand(
      "ray-serve", "a Ray Serve config file (serve deploy's YAML): each deployment becomes an app (docs/import.md)");
  c->import_ray_serve = rs;
  rs->add_option("config", c->input, "the Serve config file (YAML)")->required();
  rs->add_option("--cluster", c->cluster, "a scenario whose cluster the import keeps (default: docs/import.md's)");
  rs->add_flag("--legacy-names", c->legacy_names,
               "read max_concurrent_queries and target_num_ongoing_requests_per_replica as Ray did before July "
               "2024 (Ray now ignores them)");
  rs->add_option("-o,--output", c->out, "write the scenario here instead of stdout");
  c->export_sub = app.add_subcommand("export", "write a scenario's apps in another system's format");
  c->export_sub->require_subcommand(1);
  auto* es = c->export_sub->add_subcommand("ray-serve", "the apps as a Ray Serve config file (docs/import.md)");
  c->export_ray_serve = es;
  es->add_option("scenario", c->export_input, "the scenario file")->required();
  es->add_option("-o,--output", c->export_out, "write the config here instead of stdout");
  return c;
}

namespace {

int write_out(const std::string& what, const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text << std::flush;
    if (!std::cout) {
      std::cerr << "vramsim " << what << ": writing to stdout failed\n";
      return kOutput;
    }
    return 0;
  }
  try {
    OutputFile f(path);
    f.write(text);
    f.close();
  } catch (const OutputError& e) {
    std::cerr << "vramsim " << what << ": " << e.what() << "\n";
    return kOutput;
  }
  return 0;
}

int run_import(const ImportCommand& c) {
  const std::string what = "import ray-serve";
  try {
    RayServeImportOptions opts;
    Json cluster;
    if (!c.cluster.empty()) {
      load_scenario(c.cluster);  // its own errors name its own file
      cluster = read_json_file(c.cluster);
      opts.cluster_scenario = &cluster;
      opts.cluster_file = c.cluster;
    }
    opts.legacy_names = c.legacy_names;
    const RayServeImport r = import_ray_serve_config(read_file_text(c.input), c.input, opts);
    for (const auto& n : r.notes) std::cerr << "vramsim " << what << ": " << c.input << ": " << n << "\n";
    return write_out(what, c.out, r.scenario.dump(2) + "\n");
  } catch (const ScenarioError& e) {
    std::cerr << "vramsim " << what << ": invalid input: " << e.what() << "\n";
    return kInvalid;
  }
}

int run_export(const ImportCommand& c) {
  const std::string what = "export ray-serve";
  try {
    const Scenario s = load_scenario(c.export_input);
    const RayServeExport r = export_ray_serve_config(s);
    for (const auto& n : r.notes) std::cerr << "vramsim " << what << ": " << n << "\n";
    return write_out(what, c.export_out, r.yaml);
  } catch (const ScenarioError& e) {
    std::cerr << "vramsim " << what << ": invalid scenario: " << e.what() << "\n";
    return kInvalid;
  }
}

}  // namespace

std::optional<int> run_import_commands(const ImportCommand& c) {
  if (c.import_ray_serve->parsed()) return run_import(c);
  if (c.export_ray_serve->parsed()) return run_export(c);
  return std::nullopt;
}

}  // namespace vramsim
