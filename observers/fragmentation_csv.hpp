#pragma once
// --frag-csv: the FGD paper's picture (docs/workloads-openb.md), one CSV row
// per deployed app ("pod") just before the next arrival, so each arrival's
// placement is settled: its GPU demand, the demand arrived so far, the GPUs
// allocated, unallocated and fragmented against the workload's typical
// tasks; with --frag-nodes-csv, each GPU node's figures at the end.
#include <memory>
#include <string>
#include <vector>

#include "analysis/fragmentation.hpp"
#include "engine/output_file.hpp"
#include "observers/run_observer.hpp"

namespace vramsim {

class FragmentationCsv final : public RunObserver {
 public:
  // `tasks`: the scenario's apps as task shapes, in app order (their GPU
  // demand); `placement` names the policy in every row.
  FragmentationCsv(const Scenario& sc, const std::string& path, const std::string& nodes_path, std::string placement,
                   const std::vector<TaskShape>& tasks, const std::vector<TaskShape>& typical);
  void start() override;
  void close(SimTime end) override;

 private:
  void rows(SimTime upto);  // rows for the arrivals at or before `upto`
  struct Arrival {
    SimTime at = 0;
    std::string app;
    double gpus = 0;
  };
  std::vector<Arrival> arrivals_;
  std::size_t written_ = 0;
  double arrived_gpus_ = 0;
  std::string placement_, nodes_path_;
  std::unique_ptr<OutputFile> csv_;
  FragmentationMeter meter_;
};

}  // namespace vramsim
