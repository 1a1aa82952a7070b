#pragma once
// `vramsim import ray-serve` and `vramsim export ray-serve`: a Ray Serve
// config file to a scenario and back (scenario/ray_serve_config.hpp);
// `vramsim import bioengine`: a BioEngine app folder, its source read by
// tools/bioengine_app.py (built into the binary) under python3
// (scenario/bioengine_app.hpp). docs/import.md.
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

namespace vramsim {

struct ImportCommand {
  CLI::App* import_sub = nullptr;
  CLI::App* import_ray_serve = nullptr;
  CLI::App* import_bioengine = nullptr;
  CLI::App* export_sub = nullptr;
  CLI::App* export_ray_serve = nullptr;
  std::string input, cluster, out;
  bool legacy_names = false;
  std::string export_input, export_out;
};

// Registers `import` and `export` on `app`; the returned object receives the options.
std::unique_ptr<ImportCommand> add_import_commands(CLI::App& app);
// Runs whichever was given; none when neither was: the exit status
// (0, 2 invalid input, 3 write failed).
std::optional<int> run_import_commands(const ImportCommand& cmd);

}  // namespace vramsim
