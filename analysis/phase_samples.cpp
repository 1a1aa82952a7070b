#include "analysis/phase_samples.hpp"

#include <algorithm>
#include <set>

namespace vramsim {

const std::vector<std::string>& calibrated_phases() {
  static const std::vector<std::string> p = {"queue_wait",   "node_boot", "registration", "runtime_env_install",
                                             "replica_init", "ray_stop",  "cancel",       "job_exit_after_stop"};
  return p;
}

namespace {

std::string field(const TraceEvent& e, const char* key) {
  auto it = e.fields.find(key);
  return it != e.fields.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

void extract_phase_samples(const std::vector<TraceEvent>& trace, PhaseSamples& into) {
  // Per job: the time of each milestone (first occurrence).
  std::map<std::string, std::map<std::string, SimTime>> job;
  std::set<std::string> warm;
  // Per (node, app): when its runtime env existed (first replica running).
  std::map<std::pair<std::string, std::string>, SimTime> env_ready;
  std::set<std::pair<std::string, std::string>> env_started;
  // Per replica label: its placement, and whether it paid the install.
  struct Placed { SimTime t; std::string node, app; bool first; bool after_env; };
  std::map<std::string, Placed> placed;
  auto& s = into.samples;
  auto mark = [&](const std::string& id, const std::string& what, SimTime t) {
    if (!id.empty()) job[id].emplace(what, t);
  };
  auto span = [&](const std::string& phase, const std::string& id, const std::string& from, SimTime to) {
    auto j = job.find(id);
    if (j == job.end()) return;
    auto f = j->second.find(from);
    if (f != j->second.end() && to >= f->second) s[phase].push_back(to - f->second);
  };
  for (const auto& e : trace) {
    const std::string id = field(e, "job");
    if (e.kind == TraceKind::job_submitted) {
      if (e.fields.value("warm", false)) warm.insert(id);
      mark(id, std::string(name(e.kind)), e.t);
    } else if (e.kind == TraceKind::job_started) {
      if (!warm.count(id) && !job[id].count(std::string(name(e.kind)))) span("queue_wait", id, "job_submitted", e.t);
      mark(id, std::string(name(e.kind)), e.t);
    } else if (e.kind == TraceKind::node_advertised) {
      if (!warm.count(id) && !job[id].count(std::string(name(e.kind)))) span("node_boot", id, "job_started", e.t);
      mark(id, std::string(name(e.kind)), e.t);
    } else if (e.kind == TraceKind::node_registered) {
      if (!warm.count(id) && !job[id].count(std::string(name(e.kind)))) span("registration", id, "node_advertised", e.t);
      mark(id, std::string(name(e.kind)), e.t);
    } else if (e.kind == TraceKind::node_stop_requested) {
      mark(id, std::string(name(e.kind)), e.t);
    } else if (e.kind == TraceKind::node_lost) {
      if (field(e, "reason") == "ray stop" && !job[id].count("stopped")) {
        span("ray_stop", id, "node_stop_requested", e.t);
        mark(id, "stopped", e.t);
      }
    } else if (e.kind == TraceKind::job_cancel_requested) {
      mark(id, std::string(name(e.kind)), e.t);
    } else if (e.kind == TraceKind::job_ended) {
      const std::string state = field(e, "state");
      auto& m = job[id];
      // Cancelled while still queued: its wait lasted at least this long.
      if (!warm.count(id) && !m.count("job_started") && m.count("job_submitted") && e.t >= m.at("job_submitted"))
        into.censored["queue_wait"].push_back(e.t - m.at("job_submitted"));
      if (state == "CANCELLED" && m.count("job_started") && m.count("job_cancel_requested"))
        span("cancel", id, "job_cancel_requested", e.t);
      else if (state == "COMPLETED" && m.count("stopped"))
        span("job_exit_after_stop", id, "stopped", e.t);
    } else if (e.kind == TraceKind::replica_placed) {
      const std::string node = field(e, "node"), app = field(e, "app");
      const auto key = std::make_pair(node, app);
      const bool first = env_started.insert(key).second;
      placed[field(e, "replica")] = Placed{e.t, node, app, first, env_ready.count(key) > 0};
    } else if (e.kind == TraceKind::replica_running) {
      auto p = placed.find(field(e, "replica"));
      if (p == placed.end()) continue;
      const Placed pl = p->second;
      placed.erase(p);
      env_ready.emplace(std::make_pair(pl.node, pl.app), e.t);
      // A replica placed while another's install ran waited for part of it:
      // neither a whole install nor a bare init, so it is left out.
      if (pl.first) s["runtime_env_install"].push_back(e.t - pl.t);
      else if (pl.after_env) s["replica_init"].push_back(e.t - pl.t);
    } else if (e.kind == TraceKind::replica_lost) {
      // Its placement never ran; a later one of the same label starts afresh.
      for (auto it = placed.begin(); it != placed.end();)
        it = it->second.node == field(e, "node") && it->second.app == field(e, "app") ? placed.erase(it) : std::next(it);
    }
  }
}

void split_runtime_env(PhaseSamples& s) {
  auto inst = s.samples.find("runtime_env_install");
  auto init = s.samples.find("replica_init");
  if (inst == s.samples.end()) return;
  if (init == s.samples.end() || init->second.empty()) {
    s.notes.push_back("runtime_env_install: no replica placed on a node whose env existed, so replica init is not "
                      "separable; the samples are install + init and replica_init is not written");
    return;
  }
  std::vector<Duration> sorted = init->second;
  std::sort(sorted.begin(), sorted.end());
  const Duration med = sorted[sorted.size() / 2];
  for (auto& d : inst->second) d = std::max<Duration>(0, d - med);
  s.notes.push_back("runtime_env_install: the median replica init (" + std::to_string(med) +
                    " us) taken off each install + init span");
}

}  // namespace vramsim
