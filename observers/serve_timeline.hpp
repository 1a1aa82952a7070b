#pragma once
// --serve-timeline: every window, one CSV row per serving app: arrival
// rate, requests completed and never completed, latency percentiles,
// replicas and ongoing requests (docs/serving.md, "Timeline").
#include <memory>
#include <string>

#include "engine/output_file.hpp"
#include "observers/run_observer.hpp"

namespace vramsim {

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
