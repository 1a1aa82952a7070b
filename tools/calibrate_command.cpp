#include "tools/calibrate_command.hpp"
#include "tools/exit_codes.hpp"

#include <cmath>
#include <iomanip>
#include <iostream>

#include "engine/format.hpp"
#include "engine/output_file.hpp"
#include "analysis/calibration.hpp"
#include "analysis/trace_diff.hpp"

namespace vramsim {

using namespace cli;  // the shared exit statuses

std::unique_ptr<CalibrateCommand> add_calibrate_command(CLI::App& app) {
  auto c = std::make_unique<CalibrateCommand>();
  c->min_samples = kMinFitSamples;
  c->sub = app.add_subcommand("calibrate", "fit each phase of traces (live or simulated) to a latency model");
  c->sub->add_option("traces", c->traces, "trace files (JSON Lines)")->required();
  c->sub->add_option("-o,--output", c->out, "the model file to write (a scenario loads it with latency.from)")
      ->required();
  c->sub->add_option("--min-samples", c->min_samples, "fewest samples a phase is fitted from (at least 2)")
      ->check(CLI::Range(std::size_t{2}, std::size_t{1000000}));
  return c;
}

int run_calibrate_command(CalibrateCommand& c) {
  std::vector<std::vector<TraceEvent>> traces;
  try {
    for (const auto& t : c.traces) traces.push_back(read_trace(t));
  } catch (const std::exception& e) {
    std::cerr << "vramsim calibrate: " << e.what() << "\n";
    return kInvalid;
  }
  Calibration cal;
  try {
    cal = calibrate(traces, c.traces, c.min_samples);
  } catch (const CalibrationError& e) {
    std::cerr << "vramsim calibrate: " << e.what() << "\n";
    return kInvalid;
  }
  std::cout << std::left << std::setw(22) << "phase" << std::setw(5) << "n" << std::setw(48) << "chosen"
            << "AIC (exponential / lognormal / uniform)\n";
  for (const auto& p : cal.phases) {
    std::string aics;
    for (const auto& cand : p.fit.candidates) {
      if (cand.family == "fixed") continue;
      aics += (aics.empty() ? "" : " / ") + (cand.aic ? format_number(std::round(*cand.aic * 10) / 10) : "-");
    }
    std::cout << std::left << std::setw(22) << p.phase << std::setw(5) << p.fit.n << std::setw(48)
              << p.fit.model.describe() << aics << "\n";
  }
  const Json model = calibration_json(cal);
  for (const auto& n : model["notes"]) std::cout << "note: " << n.get<std::string>() << "\n";
  try {
    OutputFile f(c.out);
    f.write(model.dump(1) + "\n");
    f.close();
  } catch (const OutputError& e) {
    std::cerr << "vramsim calibrate: " << e.what() << "\n";
    return kOutput;
  }
  std::cerr << "latency model written to " << c.out << "\n";
  return 0;
}

}  // namespace vramsim
