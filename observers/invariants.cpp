#include "observers/invariants.hpp"

#include <algorithm>

#include "engine/format.hpp"

namespace vramsim {

Invariants::Invariants(const Scenario& sc) {
  for (const auto& ex : sc.expectations)
    if (ex.kind == Expectation::Kind::Invariant) checks_.push_back(Check{&ex, std::nullopt, 0});
}

void Invariants::check(SimTime t, std::string_view label) {
  const RunContext& w = ctx();
  for (Check& c : checks_) {
    const std::string at = " at " + format_seconds(t) + " s (" + std::string(label) + ")";
    auto violate = [&](const std::string& what) { if (!c.violation) c.violation = what + at; };
    if (c.ex->invariant == "max_worker_jobs") {
      const auto live = static_cast<std::int64_t>(w.backend.job_count());
      c.worst = std::max(c.worst, live);
      if (static_cast<double>(live) > *c.ex->max) violate(std::to_string(live) + " worker jobs");
    } else if (c.ex->invariant == "device_vram_within_total") {
      for (const Node* n : w.cluster.alive_nodes())
        for (const auto& d : n->devices())
          if (d.vram_booked_mb > d.total_vram_mb)
            violate(n->id + " device " + std::to_string(d.index) + " booked " + std::to_string(d.vram_booked_mb) +
                    "/" + std::to_string(d.total_vram_mb) + " MB");
    } else if (c.ex->invariant == "no_jobs_after_shutdown" && shutdown_done_) {
      std::string left;
      for (const auto& j : w.backend.list_jobs()) left += (left.empty() ? "" : ", ") + j.id;
      if (!left.empty()) violate("job(s) " + left + " still queued or running after shutdown");
    }
  }
}

ExpectationResult Invariants::result(const Expectation& e) const {
  const auto c = std::find_if(checks_.begin(), checks_.end(), [&](const Check& x) { return x.ex == &e; });
  ExpectationResult r;
  r.path = e.json_path;
  r.name = e.name;
  if (e.invariant == "max_worker_jobs") {
    r.description = "at every event, at most " + format_number(*e.max) + " worker job(s) queued or running";
    r.why = c->violation ? *c->violation : "at most " + std::to_string(c->worst) + " seen";
  } else if (e.invariant == "device_vram_within_total") {
    r.description = "at every event, VRAM booked on each device <= the device's VRAM";
    r.why = c->violation.value_or("");
  } else {
    r.description = "no worker job queued or running after shutdown";
    r.why = c->violation.value_or(shutdown_done_ ? "" : "the run never completed a shutdown");
  }
  r.held = !c->violation && (e.invariant != "no_jobs_after_shutdown" || shutdown_done_);
  return r;
}

}  // namespace vramsim
