#pragma once
// What is still pending when the run ends, and why: a demand no node that
// joined during the run could ever hold is pending forever (judged on each
// node's totals), with the resource no node offers enough of and any sbatch
// refusals that kept a bigger node from joining. Traced as
// `demand_unplaced` before `run_ended`; pending_forever counts them.
#include <string>
#include <vector>

#include "observers/run_observer.hpp"

namespace vramsim {

class UnplacedDemands final : public RunObserver {
 public:
  TraceKindSet kinds() const override { return kinds_of({TraceKind::node_registered, TraceKind::job_rejected}); }
  void on_event(const TraceEvent& e) override;
  void end_records(SimTime end) override;
  void measure(RunResult& result) override;

 private:
  std::vector<std::string> joined_;  // nodes that registered, in order
  int refused_ = 0;                  // sbatch refusals: why no bigger node ever joined
  std::string refusal_;              // the first one's message
};

}  // namespace vramsim
