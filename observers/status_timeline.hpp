#pragma once
// --status-every: the cluster status as a query sees it, sampled every
// period from the start, one CSV row per node per sample (docs/status.md).
#include <memory>
#include <string>

#include "engine/output_file.hpp"
#include "observers/run_observer.hpp"

namespace vramsim {

class StatusTimeline final : public RunObserver {
 public:
  StatusTimeline(Duration every, const std::string& path);
  bool reads_status() const override { return true; }
  void start() override;
  void close(SimTime end) override;

 private:
  Duration every_;
  std::unique_ptr<OutputFile> csv_;
  Executor::Periodic timeline_;
};

}  // namespace vramsim
