#pragma once
// --serve-timeline: every window, one CSV row per serving app: arrival
// rate, requests completed and never completed, latency percentiles,
// replicas and ongoing requests (docs/serving.md, "Timeline").
#include <memory>
#include <string>

#include "engine/output_file.hpp"
#include "observers/run_observer.hpp"

namespace vramsim {

// The timeline's columns, as `vramsim report` reads them by name.
inline constexpr const char* kServeTimelineHeader =
    "time_s,app,arrival_rate_per_s,completed,never,latency_p50_s,latency_p95_s,latency_p99_s,replicas,"
    "ongoing_requests,window_s,slo_latency_s";

class ServeTimeline final : public RunObserver {
 public:
  ServeTimeline(const std::string& path, Duration window);
  void prepare() override { ctx().control.keep_serve_windows(); }
  void start() override;
  void close(SimTime end) override;

 private:
  std::unique_ptr<OutputFile> csv_;
  Duration window_;
  Executor::Periodic timeline_;
};

}  // namespace vramsim
