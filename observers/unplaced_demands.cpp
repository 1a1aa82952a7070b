#include "observers/unplaced_demands.hpp"

#include <algorithm>

#include "engine/format.hpp"

namespace vramsim {
namespace {

// Why a demand that no node that joined could hold stays pending.
std::string forever_reason(const Demand& d, const std::vector<const Node*>& joined) {
  // The resource no node offers enough of, else the best node's shortfall.
  for (const auto& [k, amount] : d.request.amounts()) {
    double largest = 0;
    for (const Node* n : joined) largest = std::max(largest, n->total().get(k));
    if (to_double(amount) > largest)
      return "pending forever: needs " + k + " " + format_number(to_double(amount)) +
             (largest > 0 ? ", largest node offers " + format_number(largest) : ", no node offers " + k);
  }
  // Each resource is somewhere, never all on one node: say what each lacks.
  std::string lacks;
  for (std::size_t i = 0; i < joined.size() && i < 3; ++i) {
    std::string missing;
    for (const auto& [k, amount] : d.request.amounts())
      if (to_double(amount) > joined[i]->total().get(k)) missing += (missing.empty() ? "" : ", ") + k;
    lacks += (i ? "; " : "") + joined[i]->id + " lacks " + missing;
  }
  if (joined.size() > 3) lacks += "; ...";
  return "pending forever: no node that joined offers all of it (" + lacks + ")";
}

}  // namespace

void UnplacedDemands::on_event(const TraceEvent& e) {
  if (e.kind == TraceKind::node_registered) joined_.push_back(e["node"].get<std::string>());
  else if (refused_++ == 0) refusal_ = e["error"].get<std::string>();
}

void UnplacedDemands::end_records(SimTime end) {
  const RunContext& w = ctx();
  std::vector<const Node*> joined;
  for (const auto& id : joined_)
    if (const Node* n = w.cluster.node(id)) joined.push_back(n);
  for (DemandKind kind : {DemandKind::Actor, DemandKind::Task})
    for (const Demand* d : w.cluster.pending(kind)) {
      UnplacedDemand u;
      u.label = d->label;
      u.app = d->owner;
      u.request = d->request.to_json();
      u.forever = std::none_of(joined.begin(), joined.end(),
                               [&](const Node* n) { return n->total().contains(d->request); });
      if (!u.forever) {
        u.reason = "pending at the end: a node that joined could hold it, none had room";
      } else {
        u.reason = forever_reason(*d, joined);
        if (refused_ > 0) u.reason += "; sbatch refused " + std::to_string(refused_) + " submission(s): " + refusal_;
      }
      w.trace.record(end, TraceKind::demand_unplaced, {{"label", u.label}, {"app", u.app}, {"request", u.request},
                                                       {"forever", u.forever}, {"reason", u.reason}});
      w.result.unplaced.push_back(std::move(u));
    }
}

void UnplacedDemands::measure(RunResult& result) {
  result.metrics.pending_forever = static_cast<std::size_t>(std::count_if(
      result.unplaced.begin(), result.unplaced.end(), [](const UnplacedDemand& u) { return u.forever; }));
}

}  // namespace vramsim
