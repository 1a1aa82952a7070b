#pragma once
// The worker jobs and the autoscaler's decisions as the trace tells them,
// in either world: jobs sbatch accepted and refused, scale-ups and
// scale-downs, overbooked devices, refused deployments, the GPU time the
// jobs held (GPUs x time RUNNING) and how long they queued, and the jobs a
// completed shutdown left. The world's own account (runner/simulation.cpp,
// live/live_head.cpp) adds how each job ended.
#include <map>
#include <optional>
#include <string>

#include "observers/run_observer.hpp"

namespace vramsim {

class JobAccounting final : public RunObserver {
 public:
  TraceKindSet kinds() const override;
  void on_event(const TraceEvent& e) override;
  void close(SimTime end) override { end_ = end; }
  void measure(RunResult& result) override;

 private:
  struct Job {
    double gpus = 0;
    std::optional<SimTime> submitted, started, ended;
  };
  RunMetrics m_;  // the counts, as the events come
  std::map<std::string, Job> jobs_;
  SimTime end_ = 0;
};

}  // namespace vramsim
