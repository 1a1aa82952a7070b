#include "observers/fragmentation_csv.hpp"

#include <algorithm>
#include <map>

#include "analysis/csv_columns.hpp"
#include "engine/csv.hpp"
#include "engine/format.hpp"

namespace vramsim {

FragmentationCsv::FragmentationCsv(const Scenario& sc, const std::string& path, const std::string& nodes_path,
                                   std::string placement, const std::vector<TaskShape>& tasks,
                                   const std::vector<TaskShape>& typical)
    : placement_(std::move(placement)), nodes_path_(nodes_path), csv_(std::make_unique<OutputFile>(path)),
      meter_(typical) {
  csv_->write(csv_header(frag_columns::all) + "\n");
  std::map<std::string, double> demand;
  for (std::size_t i = 0; i < sc.apps.size() && i < tasks.size(); ++i)
    demand[sc.apps[i].id] = to_double(tasks[i].gpus) * std::max(1, sc.apps[i].replicas);
  for (const auto& a : sc.actions)
    if (a.kind == ActionKind::Deploy)
      arrivals_.push_back(Arrival{a.at, a.app, demand.count(a.app) ? demand[a.app] : 0.0});
}

void FragmentationCsv::start() {
  // Each arrival's row just before the next arrival time; the last ones at
  // the end of the run.
  for (std::size_t i = 0; i + 1 < arrivals_.size(); ++i) {
    const SimTime at = arrivals_[i].at, next = arrivals_[i + 1].at;
    if (next > at) ctx().exec.at(std::max(at, next - 1), [this, at] { rows(at); });
  }
}

void FragmentationCsv::rows(SimTime upto) {
  if (written_ >= arrivals_.size() || arrivals_[written_].at > upto) return;
  const ClusterFragmentation c = meter_.measure(ctx().cluster);
  const std::string state = "," + format_amount(c.gpus) + "," + format_amount(c.allocated) + "," +
                            format_amount(c.unallocated()) + "," + format_amount(c.fragmented) + "," +
                            std::to_string(c.nodes_fragmented) + "," + format_amount(c.node_max) + "\n";
  for (; written_ < arrivals_.size() && arrivals_[written_].at <= upto; ++written_) {
    const Arrival& a = arrivals_[written_];
    arrived_gpus_ += a.gpus;
    csv_->write(std::to_string(written_ + 1) + "," + format_number(to_seconds(a.at)) + "," + csv_field(a.app) + "," +
                csv_field(placement_) + "," + format_amount(a.gpus) + "," + format_amount(arrived_gpus_) + "," +
                format_amount(c.gpus > 0 ? arrived_gpus_ / c.gpus : 0) + state);
  }
}

void FragmentationCsv::close(SimTime) {
  rows(kTimeMax);
  csv_->close();
  if (nodes_path_.empty()) return;
  OutputFile nodes(nodes_path_);
  nodes.write(csv_header(frag_node_columns::all) + "\n");
  for (const auto& n : meter_.per_node(ctx().cluster))
    nodes.write(csv_field(n.node) + "," + csv_field(n.model) + "," + std::to_string(n.gpus) + "," + format_amount(n.allocated) + "," +
                format_amount(n.fragmented) + "," + format_amount(n.cpus_free) + "\n");
  nodes.close();
}

}  // namespace vramsim
