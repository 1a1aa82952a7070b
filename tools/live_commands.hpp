#pragma once
// The live-mode subcommands of vramsim: `live`, `status --live` and `diff`.
// Registered beside run/compare/policies; kept apart so the simulator's
// command line stays readable.
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>

namespace vramsim {

struct LiveCommandState;

class LiveCommands {
 public:
  explicit LiveCommands(CLI::App& app);
  ~LiveCommands();
  // The exit status when one of these subcommands was given, else nullopt.
  std::optional<int> run();

 private:
  std::unique_ptr<LiveCommandState> s_;
};

}  // namespace vramsim
