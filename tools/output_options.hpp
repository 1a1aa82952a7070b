#pragma once
// The options that ask a run for its outputs, the same for `vramsim run`
// and `vramsim live` (observers/observer_factory.hpp builds the outputs
// either way), and the "written" lines both print once a run closed them.
#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "observers/observer_factory.hpp"

namespace vramsim {

struct OutputOptions {
  std::string status_json, status_csv, status_every, serve_timeline, serve_window, frag_csv, frag_nodes_csv;
  std::string chrome_trace, summary_json, requests_csv;
  std::vector<std::string> status_at;
  bool critical_path = false;
};

// Registers the options on `cmd` (not --trace: each command says where its
// trace goes).
void add_output_options(CLI::App* cmd, OutputOptions& o);
// The options as RunOutputs; false, with the message said on stderr
// ("vramsim: --OPTION: ..."), when one is invalid. Throws
// CLI::ValidationError for a --status-at that is not a duration.
// `command` ("run", "live") names the command where two options conflict.
bool parse_output_options(const OutputOptions& o, const std::string& command, RunOutputs& out);
// One line per output file a run wrote, on `err`: stdout stays the same
// wherever the run goes.
void print_written(const RunOutputs& out, std::ostream& err);

}  // namespace vramsim
