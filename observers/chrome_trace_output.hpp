#pragma once
// --chrome-trace: the run in Chrome Trace Event format (Perfetto), built as
// the events come (analysis/chrome_trace.hpp) and written at the end.
#include <string>

#include "analysis/chrome_trace.hpp"
#include "observers/run_observer.hpp"

namespace vramsim {

class ChromeTraceOutput final : public RunObserver {
 public:
  explicit ChromeTraceOutput(std::string path) : path_(std::move(path)) {}
  TraceKindSet kinds() const override { return every_kind(); }
  void on_event(const TraceEvent& e) override {
    converter_.add(e);
    last_ = e.t;
  }
  void close(SimTime) override { converter_.write(last_, path_); }

 private:
  std::string path_;
  ChromeTraceConverter converter_;
  SimTime last_ = 0;
};

}  // namespace vramsim
