#include "observers/serve_timeline.hpp"

#include "analysis/csv_columns.hpp"
#include "engine/csv.hpp"
#include "engine/format.hpp"

namespace vramsim {

ServeTimeline::ServeTimeline(const std::string& path, Duration window)
    : csv_(std::make_unique<OutputFile>(path)), window_(window) {
  csv_->write(csv_header(serve_timeline_columns::all) + "\n");
}

void ServeTimeline::start() {
  timeline_ = ctx().exec.every(window_, [this] {
    const double t = to_seconds(ctx().exec.now());
    auto opt = [](std::optional<double> v) { return v ? format_number(*v) : std::string(); };
    for (const ServeWindow& s : ctx().control.take_serve_window())
      csv_->write(format_number(t) + "," + csv_field(s.app) + "," +
                  format_number(static_cast<double>(s.arrivals) / to_seconds(window_)) + "," +
                  std::to_string(s.completed) + "," + std::to_string(s.never) + "," + opt(s.p50_s) + "," +
                  opt(s.p95_s) + "," + opt(s.p99_s) + "," + std::to_string(s.replicas) + "," +
                  format_number(s.ongoing) + "," + format_number(to_seconds(window_)) + "," +
                  opt(s.slo_latency_s) + "\n");
  });
}

void ServeTimeline::close(SimTime) {
  timeline_.cancel();
  csv_->close();
}

}  // namespace vramsim
