#pragma once
// --critical-path: each app's chain of waits to RUNNING, from the events
// that can lie on one (analysis/critical_path.hpp), kept as they come.
#include <vector>

#include "analysis/critical_path.hpp"
#include "observers/run_observer.hpp"

namespace vramsim {

class CriticalPaths final : public RunObserver {
 public:
  TraceKindSet kinds() const override;
  void on_event(const TraceEvent& e) override { events_.push_back(e); }
  void conclude(RunResult& result) override;

 private:
  std::vector<TraceEvent> events_;
};

}  // namespace vramsim
