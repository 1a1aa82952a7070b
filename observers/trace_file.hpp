#pragma once
// The trace itself as JSON Lines (docs/trace-format.md): a file (--trace;
// in live mode each event reaches it at once, for tail -f and a crashed
// head's post-mortem) or a stream (Python's `events`).
#include <memory>
#include <ostream>
#include <string>

#include "observers/run_observer.hpp"

namespace vramsim {

class TraceFile final : public RunObserver {
 public:
  TraceFile(const std::string& path, bool flush_each_event)
      : sink_(std::make_unique<JsonLinesSink>(path)), flush_each_(flush_each_event) {}
  explicit TraceFile(std::ostream& out) : sink_(std::make_unique<JsonLinesSink>(out)) {}
  TraceKindSet kinds() const override { return every_kind(); }
  void on_event(const TraceEvent& e) override {
    sink_->write(e);
    if (flush_each_) sink_->flush();
  }
  void close(SimTime) override { sink_->close(); }

 private:
  std::unique_ptr<JsonLinesSink> sink_;
  bool flush_each_ = false;
};

}  // namespace vramsim
