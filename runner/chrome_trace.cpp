#include "runner/chrome_trace.hpp"

#include <map>
#include <optional>

#include "engine/output_file.hpp"

namespace vramsim {
namespace {

std::string text(const Json& j) { return j.is_string() ? j.get<std::string>() : ""; }

constexpr int kAppsPid = 1, kJobsPid = 2, kFirstNodePid = 3;

// Collects the output: metadata first, then slices and instants in the
// order they closed or happened.
class Builder {
 public:
  void name_process(int pid, const std::string& name) {
    meta_.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", name}}}});
    meta_.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", pid}}}});
  }
  void name_thread(int pid, int tid, const std::string& name) {
    meta_.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
    meta_.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"sort_index", tid}}}});
  }
  void slice(int pid, int tid, const std::string& name, const std::string& cat, SimTime from, SimTime to, Json args) {
    events_.push_back({{"name", name}, {"cat", cat}, {"ph", "X"}, {"ts", from}, {"dur", to - from},
                       {"pid", pid}, {"tid", tid}, {"args", std::move(args)}});
  }
  void instant(int pid, int tid, const std::string& name, const std::string& cat, SimTime t, Json args) {
    events_.push_back({{"name", name}, {"cat", cat}, {"ph", "i"}, {"s", "t"}, {"ts", t},
                       {"pid", pid}, {"tid", tid}, {"args", std::move(args)}});
  }
  Json done(Json other) {
    Json all = Json::array();
    for (auto& m : meta_) all.push_back(std::move(m));
    for (auto& e : events_) all.push_back(std::move(e));
    return {{"traceEvents", std::move(all)}, {"displayTimeUnit", "ms"}, {"otherData", std::move(other)}};
  }

 private:
  std::vector<Json> meta_, events_;
};

// A slice opened by one event and closed by a later one.
struct Open {
  std::string name;
  SimTime from = 0;
  Json args;
};

}  // namespace

Json chrome_trace(const std::vector<TraceEvent>& events) {
  Builder b;
  const SimTime end = events.empty() ? 0 : events.back().t;
  Json other = Json::object();
  b.name_process(kAppsPid, "apps");
  b.name_process(kJobsPid, "SLURM worker jobs");
  b.name_thread(kJobsPid, 0, "autoscaler and sbatch");

  std::map<std::string, int> app_tid, job_tid, node_pid;
  std::map<std::string, Open> app_state, job_state, node_life;
  struct Replica {
    std::string app, node, label;
    int tid = 0;
    Open open;
  };
  std::vector<Replica> replicas;                 // open ones
  std::map<std::pair<std::string, std::string>, int> replica_tid;  // (node, label) -> tid
  std::map<std::string, int> node_threads;       // node -> tids used
  std::map<std::string, std::string> job_node;   // for node names

  auto app_track = [&](const std::string& app) {
    auto [it, fresh] = app_tid.emplace(app, static_cast<int>(app_tid.size()) + 1);
    if (fresh) b.name_thread(kAppsPid, it->second, app);
    return it->second;
  };
  auto job_track = [&](const std::string& job) {
    auto [it, fresh] = job_tid.emplace(job, static_cast<int>(job_tid.size()) + 1);
    if (fresh) b.name_thread(kJobsPid, it->second, "job " + job);
    return it->second;
  };
  auto node_process = [&](const std::string& node, const std::string& label) {
    auto [it, fresh] = node_pid.emplace(node, kFirstNodePid + static_cast<int>(node_pid.size()));
    if (fresh) {
      b.name_process(it->second, label);
      b.name_thread(it->second, 0, "node");
    }
    return it->second;
  };
  auto close_app = [&](const std::string& app, SimTime t) {
    if (auto it = app_state.find(app); it != app_state.end()) {
      b.slice(kAppsPid, app_track(app), it->second.name, "app", it->second.from, t, it->second.args);
      app_state.erase(it);
    }
  };
  auto close_job = [&](const std::string& job, SimTime t, Json extra = Json::object()) {
    if (auto it = job_state.find(job); it != job_state.end()) {
      it->second.args.update(extra);
      b.slice(kJobsPid, job_track(job), it->second.name, "job", it->second.from, t, it->second.args);
      job_state.erase(it);
    }
  };
  auto close_replica = [&](std::size_t i, SimTime t, const std::string& why) {
    Replica& r = replicas[i];
    r.open.args["removed"] = why;
    b.slice(node_pid[r.node], r.tid, r.open.name, "replica", r.open.from, t, r.open.args);
    replicas.erase(replicas.begin() + static_cast<std::ptrdiff_t>(i));
  };
  auto close_replicas = [&](auto pred, SimTime t, const std::string& why) {
    for (std::size_t i = replicas.size(); i-- > 0;)
      if (pred(replicas[i])) close_replica(i, t, why);
  };

  for (const auto& e : events) {
    const std::string& k = e.kind;
    const std::string app = text(e["app"]), job = text(e["job"]), node = text(e["node"]);
    if (k == "run_started") {
      other = {{"scenario", e["scenario"]}, {"seed", e["seed"]}, {"policies", e["policies"]}};
    } else if (k == "deploy_requested") {
      close_app(app, e.t);
      app_state[app] = Open{"requested", e.t, e.fields};
    } else if (k == "app_state") {
      close_app(app, e.t);
      const std::string to = text(e["to"]);
      if (to != "DELETED") app_state[app] = Open{to, e.t, {{"reason", e["reason"]}}};
      if (to == "DELETED") close_replicas([&](const Replica& r) { return r.app == app; }, e.t, "app deleted");
    } else if (k == "admission" && e["admitted"] == false) {
      b.instant(kAppsPid, app_track(app), "rejected at admission", "rejection", e.t, e.fields);
    } else if (k == "deploy_cancelled" || k == "deploy_ignored" || k == "call_failed") {
      b.instant(kAppsPid, app_track(app), k, "rejection", e.t, e.fields);
    } else if (k == "scale_up" || k == "scale_down" || k == "autoscaler_error" || k == "worker_creation_failed") {
      b.instant(kJobsPid, 0, k, "autoscaler", e.t, e.fields);
    } else if (k == "job_rejected") {
      b.instant(kJobsPid, 0, "sbatch refused", "rejection", e.t, e.fields);
    } else if (k == "job_submitted") {
      job_track(job);
      job_state[job] = Open{"queue wait", e.t, e.fields};
    } else if (k == "job_started") {
      close_job(job, e.t);
      job_state[job] = Open{"running", e.t, {{"host", e["host"]}}};
    } else if (k == "job_ended") {
      close_job(job, e.t, {{"state", e["state"]}, {"reason", e["reason"]}});
    } else if (k == "node_registered") {
      const std::string ip = text(e["ip"]);
      node_process(node, node + " (" + ip + (job.empty() ? "" : ", job " + job) + ")");
      node_life[node] = Open{"registered", e.t, {{"resources", e["resources"]}}};
    } else if (k == "node_lost") {
      close_replicas([&](const Replica& r) { return r.node == node; }, e.t, "node lost");
      if (auto it = node_life.find(node); it != node_life.end()) {
        it->second.args["lost"] = e["reason"];
        b.slice(node_pid[node], 0, "registered", "node", it->second.from, e.t, it->second.args);
        node_life.erase(it);
      }
    } else if (k == "replica_placed") {
      const int pid = node_process(node, node);
      const std::string label = text(e["replica"]);
      auto [it, fresh] = replica_tid.emplace(std::make_pair(node, label), node_threads[node] + 1);
      if (fresh) {
        ++node_threads[node];
        b.name_thread(pid, it->second, label);
      }
      replicas.push_back(Replica{app, node, label, it->second, Open{"placed", e.t, e.fields}});
    } else if (k == "replica_running") {
      for (auto& r : replicas)
        if (r.node == node && r.label == text(e["replica"]) && r.open.name == "placed") {
          b.slice(node_pid[node], r.tid, "placed", "replica", r.open.from, e.t, r.open.args);
          r.open = Open{"running", e.t, {{"app", app}}};
          break;
        }
    } else if (k == "replica_lost" || k == "replica_start_failed") {
      // The record names the app and node only: the oldest such replica goes.
      for (std::size_t i = 0; i < replicas.size(); ++i)
        if (replicas[i].app == app && replicas[i].node == node) {
          close_replica(i, e.t, k == "replica_lost" ? "node lost" : "start failed");
          break;
        }
    }
  }
  // What is still open runs to the end of the trace.
  close_replicas([](const Replica&) { return true; }, end, "trace ended");
  for (const auto& [n, o] : node_life) b.slice(node_pid[n], 0, o.name, "node", o.from, end, o.args);
  std::vector<std::string> open_jobs, open_apps;
  for (const auto& [j, o] : job_state) open_jobs.push_back(j);
  for (const auto& j : open_jobs) close_job(j, end);
  for (const auto& [a, o] : app_state) open_apps.push_back(a);
  for (const auto& a : open_apps) close_app(a, end);
  return b.done(std::move(other));
}

void write_chrome_trace(const std::vector<TraceEvent>& events, const std::string& path) {
  OutputFile f(path);
  f.write(chrome_trace(events).dump(-1, ' ', false, Json::error_handler_t::replace));
  f.write("\n");
  f.close();
}

}  // namespace vramsim
