#include "observers/status_timeline.hpp"

#include "models/status.hpp"

namespace vramsim {

StatusTimeline::StatusTimeline(Duration every, const std::string& path)
    : every_(every), csv_(std::make_unique<OutputFile>(path)) {
  csv_->write(status_csv_header() + "\n");
}

void StatusTimeline::start() {
  timeline_ = ctx().exec.every(every_, [this] {
    const SimTime now = ctx().exec.now();
    for (const auto& row : status_csv_rows(ctx().control.status(), now)) csv_->write(row + "\n");
  }, 0);
}

void StatusTimeline::close(SimTime) {
  timeline_.cancel();
  csv_->close();
}

}  // namespace vramsim
