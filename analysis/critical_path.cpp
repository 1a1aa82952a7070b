#include "analysis/critical_path.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <cstdio>
#include <map>

namespace vramsim {
namespace {

struct EdgeLabel {
  std::string waited;
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property, EdgeLabel>;

std::string str(const Json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

std::string describe(const TraceEvent& e) {
  const TraceKind k = e.kind;
  if (k == TraceKind::deploy_requested) return "deploy " + str(e["app"]);
  if (k == TraceKind::introspection_submitted) return "introspection task submitted";
  if (k == TraceKind::sizing) return "sized: " + str(e["branch"]) + ", num_gpus " + str(e["num_gpus"]);
  if (k == TraceKind::admission) return std::string(e["admitted"] == true ? "admitted (" : "rejected (") + str(e["reason"]) + ")";
  if (k == TraceKind::replicas_submitted) return str(e["replicas"]) + " replica(s) pending";
  if (k == TraceKind::scale_up) return "scale-up: " + str(e["gpus"]) + " GPU, " + str(e["cpus"]) + " CPU";
  if (k == TraceKind::job_submitted) return "job " + str(e["job"]) + " submitted";
  if (k == TraceKind::job_started) return "job " + str(e["job"]) + " started on " + str(e["host"]);
  if (k == TraceKind::node_advertised) return "node advertised " + e["resources"].dump();
  if (k == TraceKind::node_registered) return str(e["node"]) + " registered";
  if (k == TraceKind::replica_placed) return str(e["replica"]) + " placed on " + str(e["node"]);
  if (k == TraceKind::replica_running) return str(e["replica"]) + " running";
  if (k == TraceKind::replica_lost) return "replica lost with " + str(e["node"]);
  if (k == TraceKind::proxy_placed) return str(e["app"]) + "'s proxy placed on " + str(e["node"]);
  if (k == TraceKind::proxy_running) return str(e["app"]) + "'s proxy running";
  if (k == TraceKind::app_state) return str(e["app"]) + " " + str(e["to"]);
  return std::string(name(k));
}

// Vertices are trace events (by index); only the kinds that can lie on a
// deploy's path are linked, each edge labelled with what the effect waited
// for. The graph is the same for every app.
Graph causal_graph(const std::vector<TraceEvent>& events) {
  Graph g(events.size());
  auto link = [&](std::size_t cause, std::size_t effect, const std::string& waited) {
    boost::add_edge(cause, effect, EdgeLabel{waited}, g);
  };
  std::map<std::string, std::size_t> last_of_app;      // app -> latest deploy-chain event
  std::map<std::string, std::size_t> last_submitted;   // app -> latest replicas_submitted
  std::map<std::string, std::size_t> job_step;         // job -> latest job/node event
  std::map<std::string, std::size_t> node_registered;  // node -> its registration
  std::map<std::string, std::size_t> placed;           // replica label -> its placement
  std::map<std::string, std::size_t> proxy_placed;     // app -> its proxy's placement
  std::map<std::string, std::vector<std::size_t>> running;  // app -> replica_running since deploy
  std::optional<std::size_t> last_demand;
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t last_scale_up = kNone;  // a scale-up whose job is not yet submitted

  for (std::size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    const TraceKind k = e.kind;
    const std::string a = e["app"].is_string() ? e["app"].get<std::string>() : "";
    if (k == TraceKind::deploy_requested) {
      last_of_app[a] = i;
      running[a].clear();
    } else if (k == TraceKind::introspection_submitted) {
      if (last_of_app.count(a)) link(last_of_app[a], i, "deploy lock");
      last_of_app[a] = i;
      last_demand = i;
    } else if (k == TraceKind::sizing || k == TraceKind::admission) {
      if (last_of_app.count(a)) link(last_of_app[a], i, k == TraceKind::sizing ? "introspection" : "");
      last_of_app[a] = i;
    } else if (k == TraceKind::replicas_submitted) {
      if (last_of_app.count(a)) link(last_of_app[a], i, "");
      last_of_app[a] = i;
      last_submitted[a] = i;
      last_demand = i;
    } else if (k == TraceKind::replica_lost) {
      last_demand = i;
    } else if (k == TraceKind::scale_up) {
      if (last_demand) link(*last_demand, i, "pending demand seen by the autoscaler tick");
      last_scale_up = i;
    } else if (k == TraceKind::job_rejected || k == TraceKind::worker_creation_failed) {
      last_scale_up = kNone;  // that decision's sbatch gave no job
    } else if (k == TraceKind::job_submitted) {
      // The next job sbatch accepts is the scale-up's: at the same instant
      // in simulation, a few milliseconds later live.
      const std::string job = str(e["job"]);
      if (last_scale_up != kNone && !e.fields.contains("warm")) link(last_scale_up, i, "sbatch");
      last_scale_up = kNone;
      job_step[job] = i;
    } else if (k == TraceKind::job_started || k == TraceKind::node_advertised || (k == TraceKind::node_registered && str(e["job"]) != "")) {
      const std::string job = str(e["job"]);
      if (job_step.count(job))
        link(job_step[job], i, k == TraceKind::job_started ? "SLURM queue wait" : k == TraceKind::node_advertised ? "node boot" : "registration");
      job_step[job] = i;
      if (k == TraceKind::node_registered) node_registered[str(e["node"])] = i;
    } else if (k == TraceKind::replica_placed || k == TraceKind::proxy_placed) {
      if (last_submitted.count(a)) link(last_submitted[a], i, "waiting for a node with room");
      const std::string node = str(e["node"]);
      if (node_registered.count(node)) link(node_registered[node], i, "placement");
      if (k == TraceKind::replica_placed)
        placed[str(e["replica"])] = i;
      else
        proxy_placed[a] = i;
    } else if (k == TraceKind::proxy_running) {
      // The app is RUNNING once its proxy runs too.
      if (proxy_placed.count(a)) link(proxy_placed[a], i, "proxy env install");
      running[a].push_back(i);
    } else if (k == TraceKind::replica_running) {
      const std::string r = str(e["replica"]);
      if (placed.count(r)) link(placed[r], i, "runtime env install + replica init");
      running[a].push_back(i);
    } else if (k == TraceKind::app_state && e["to"] == "RUNNING") {
      for (std::size_t r : running[a]) link(r, i, "all replicas running");
    }
  }
  return g;
}

CriticalPath walk_back(const std::vector<TraceEvent>& events, const Graph& g, std::size_t end_index,
                       const std::string& app);

}  // namespace

bool on_critical_paths(TraceKind k) {
  switch (k) {
    case TraceKind::deploy_requested: case TraceKind::introspection_submitted: case TraceKind::sizing:
    case TraceKind::admission: case TraceKind::replicas_submitted: case TraceKind::replica_lost:
    case TraceKind::scale_up: case TraceKind::job_rejected: case TraceKind::worker_creation_failed:
    case TraceKind::job_submitted: case TraceKind::job_started: case TraceKind::node_advertised:
    case TraceKind::node_registered: case TraceKind::replica_placed: case TraceKind::proxy_placed:
    case TraceKind::proxy_running: case TraceKind::replica_running: case TraceKind::app_state:
      return true;
    default:
      return false;
  }
}

std::optional<CriticalPath> critical_path(const std::vector<TraceEvent>& events, const std::string& app) {
  return critical_paths(events, {app}).front();
}

std::vector<std::optional<CriticalPath>> critical_paths(const std::vector<TraceEvent>& events,
                                                        const std::vector<std::string>& apps) {
  const Graph g = causal_graph(events);
  // A path ends at the app's first RUNNING.
  std::map<std::string, std::size_t> first_running;
  for (std::size_t i = 0; i < events.size(); ++i)
    if (events[i].kind == TraceKind::app_state && events[i]["to"] == "RUNNING" && events[i]["app"].is_string())
      first_running.emplace(events[i]["app"].get<std::string>(), i);
  std::vector<std::optional<CriticalPath>> out;
  for (const auto& app : apps) {
    auto it = first_running.find(app);
    if (it == first_running.end())
      out.emplace_back(std::nullopt);
    else
      out.emplace_back(walk_back(events, g, it->second, app));
  }
  return out;
}

namespace {

CriticalPath walk_back(const std::vector<TraceEvent>& events, const Graph& g, std::size_t end_index,
                       const std::string& app) {
  // Walk back along the latest-arriving cause (ties: the later-recorded one).
  std::vector<std::size_t> chain{end_index};
  std::map<std::size_t, std::string> waited;  // vertex -> what the time before it went on
  for (std::size_t v = end_index;;) {
    std::optional<std::size_t> best;
    for (auto [it, stop] = boost::in_edges(v, g); it != stop; ++it) {
      const std::size_t u = boost::source(*it, g);
      if (!best || events[u].t > events[*best].t || (events[u].t == events[*best].t && u > *best)) {
        best = u;
        waited[v] = g[*it].waited;
      }
    }
    if (!best) break;
    chain.push_back(*best);
    v = *best;
  }
  CriticalPath path;
  path.app = app;
  path.running = events[end_index].t;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const TraceEvent& e = events[*it];
    path.steps.push_back(PathStep{e.t, std::string(name(e.kind)), describe(e), waited.count(*it) ? waited[*it] : ""});
  }
  path.requested = path.steps.front().t;
  return path;
}

}  // namespace

namespace {

// Waits a scenario's latencies set (cluster.latency, the proxy's env among
// them, the introspection's env build and run, sbatch's answer); every other wait is the control
// plane's mechanism (a pass's phase, the deploy lock, waiting for room).
bool set_by_input(const std::string& waited) {
  return waited == "SLURM queue wait" || waited == "node boot" || waited == "registration" ||
         waited == "runtime env install + replica init" || waited == "introspection" || waited == "sbatch" ||
         waited == "proxy env install";
}

}  // namespace

void print_critical_path(const CriticalPath& p, std::ostream& out) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", to_seconds(p.running - p.requested));
  out << "critical path of " << p.app << " to RUNNING (" << buf << " s from the first event):\n";
  SimTime prev = p.steps.empty() ? 0 : p.steps.front().t;
  // Each wait on the path, summed by what it was spent on, in path order.
  std::vector<std::pair<std::string, Duration>> inputs, mechanism;
  auto add = [](std::vector<std::pair<std::string, Duration>>& to, const std::string& what, Duration d) {
    for (auto& [w, sum] : to)
      if (w == what) {
        sum += d;
        return;
      }
    to.emplace_back(what, d);
  };
  for (const auto& s : p.steps) {
    std::snprintf(buf, sizeof buf, "%10.3f s  %+9.3f s  ", to_seconds(s.t), to_seconds(s.t - prev));
    out << "  " << buf << s.what;
    if (!s.waited.empty() && s.t != prev) out << "   [" << s.waited << "]";
    out << "\n";
    if (s.t != prev) add(set_by_input(s.waited) ? inputs : mechanism, s.waited.empty() ? "other" : s.waited, s.t - prev);
    prev = s.t;
  }
  auto line = [&](const char* title, const std::vector<std::pair<std::string, Duration>>& parts) {
    Duration total = 0;
    for (const auto& part : parts) total += part.second;
    std::snprintf(buf, sizeof buf, "%.3f", to_seconds(total));
    out << "  " << title << ": " << buf << " s";
    const char* sep = " (";
    for (const auto& [what, d] : parts) {
      std::snprintf(buf, sizeof buf, "%.3f", to_seconds(d));
      out << sep << what << " " << buf << " s";
      sep = ", ";
    }
    out << (parts.empty() ? "\n" : ")\n");
  };
  line("set by the scenario's latencies", inputs);
  line("by the control plane's mechanism", mechanism);
}

}  // namespace vramsim
