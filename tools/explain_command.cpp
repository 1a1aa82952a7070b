#include "tools/explain_command.hpp"
#include "tools/exit_codes.hpp"

#include <iostream>

#include "engine/output_file.hpp"
#include "analysis/chrome_trace.hpp"
#include "analysis/explain.hpp"
#include "analysis/trace_diff.hpp"

namespace vramsim {

using namespace cli;  // the shared exit statuses

std::unique_ptr<ExplainCommand> add_explain_command(CLI::App& app) {
  auto c = std::make_unique<ExplainCommand>();
  auto* e = app.add_subcommand("explain", "why each app of a recorded run is or is not RUNNING, from its trace");
  c->sub = e;
  e->add_option("trace", c->trace, "trace file (JSON Lines) of a simulated or live run")->required();
  e->add_option("--app", c->app, "only this app");
  e->add_option("--format", c->format, "text | json (default text)");
  e->add_option("--chrome-trace", c->chrome_trace, "also write the trace in Chrome Trace Event format (Perfetto) to this file");
  return c;
}

int run_explain_command(const ExplainCommand& c) {
  if (c.format != "text" && c.format != "json") {
    std::cerr << "vramsim explain: --format: expected text or json, got '" << c.format << "'\n";
    return kInvalid;
  }
  Explanation x;
  std::vector<TraceEvent> events;
  try {
    events = read_trace(c.trace);
    x = explain_trace(events, c.app.empty() ? std::nullopt : std::optional<std::string>(c.app));
  } catch (const ExplainError& e) {
    std::cerr << "vramsim explain: " << c.trace << ": " << e.what() << "\n";
    return kInvalid;
  } catch (const std::runtime_error& e) {
    // read_trace names the file and the line.
    std::cerr << "vramsim explain: " << e.what() << "\n";
    return kInvalid;
  }
  if (!c.chrome_trace.empty()) {
    try {
      write_chrome_trace(events, c.chrome_trace);
    } catch (const OutputError& e) {
      std::cerr << "vramsim explain: " << e.what() << "\n";
      return kOutput;
    }
    std::cerr << "Chrome trace written to " << c.chrome_trace << "\n";
  }
  if (c.format == "json")
    std::cout << explanation_json(x).dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  else
    print_explanation(x, std::cout);
  std::cout << std::flush;
  if (!std::cout) {
    std::cerr << "vramsim explain: writing to stdout failed\n";
    return kOutput;
  }
  return 0;
}

}  // namespace vramsim
