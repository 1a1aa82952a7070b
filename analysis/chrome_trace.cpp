#include "analysis/chrome_trace.hpp"

#include <map>
#include <optional>

#include "engine/output_file.hpp"

namespace vramsim {
namespace chrome_trace_detail {


constexpr int kAppsPid = 1, kJobsPid = 2, kFirstNodePid = 3;

// Collects the output: metadata first, then slices and instants in the
// order they closed or happened.
class ChromeTraceBuilder {
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

// The run as tracks: one per app, one per worker job, one process per node
// with a thread per replica. Each trace event opens or closes slices.
class TrackBuilder {
 public:
  TrackBuilder() {
    b_.name_process(kAppsPid, "apps");
    b_.name_process(kJobsPid, "SLURM worker jobs");
    b_.name_thread(kJobsPid, 0, "autoscaler and sbatch");
  }

  void add(const TraceEvent& e) {
    const TraceKind k = e.kind;
    if (k == TraceKind::run_started) {
      other_ = {{"scenario", e["scenario"]}, {"seed", e["seed"]}, {"policies", e["policies"]}};
    } else if (!app_event(e) && !job_event(e) && !node_event(e)) {
      replica_event(e);
    }
  }

  // What is still open runs to the end of the trace.
  Json finish(SimTime end) {
    close_replicas([](const Replica&) { return true; }, end, "trace ended");
    for (const auto& [n, o] : node_life_) b_.slice(node_pid_[n], 0, o.name, "node", o.from, end, o.args);
    std::vector<std::string> open_jobs, open_apps;
    for (const auto& [j, o] : job_state_) open_jobs.push_back(j);
    for (const auto& j : open_jobs) close_job(j, end);
    for (const auto& [a, o] : app_state_) open_apps.push_back(a);
    for (const auto& a : open_apps) close_app(a, end);
    return b_.done(std::move(other_));
  }

 private:
  struct Replica {
    std::string app, node, label;
    int tid = 0;
    Open open;
  };

  bool app_event(const TraceEvent& e) {
    const TraceKind k = e.kind;
    const std::string app = string_field(e["app"]);
    if (k == TraceKind::deploy_requested) {
      close_app(app, e.t);
      app_state_[app] = Open{"requested", e.t, e.fields};
    } else if (k == TraceKind::app_state) {
      close_app(app, e.t);
      const std::string to = string_field(e["to"]);
      if (to != "DELETED") app_state_[app] = Open{to, e.t, {{"reason", e["reason"]}}};
      if (to == "DELETED") close_replicas([&](const Replica& r) { return r.app == app; }, e.t, "app deleted");
    } else if (k == TraceKind::admission && e["admitted"] == false) {
      b_.instant(kAppsPid, app_track(app), "rejected at admission", "rejection", e.t, e.fields);
    } else if (k == TraceKind::deploy_cancelled || k == TraceKind::deploy_ignored || k == TraceKind::call_failed) {
      b_.instant(kAppsPid, app_track(app), std::string(name(k)), "rejection", e.t, e.fields);
    } else {
      return false;
    }
    return true;
  }

  bool job_event(const TraceEvent& e) {
    const TraceKind k = e.kind;
    const std::string job = string_field(e["job"]);
    if (k == TraceKind::scale_up || k == TraceKind::scale_down || k == TraceKind::autoscaler_error || k == TraceKind::worker_creation_failed) {
      b_.instant(kJobsPid, 0, std::string(name(k)), "autoscaler", e.t, e.fields);
    } else if (k == TraceKind::job_rejected) {
      b_.instant(kJobsPid, 0, "sbatch refused", "rejection", e.t, e.fields);
    } else if (k == TraceKind::job_submitted) {
      job_track(job);
      job_state_[job] = Open{"queue wait", e.t, e.fields};
    } else if (k == TraceKind::job_started) {
      close_job(job, e.t);
      job_state_[job] = Open{"running", e.t, {{"host", e["host"]}}};
    } else if (k == TraceKind::job_ended) {
      close_job(job, e.t, {{"state", e["state"]}, {"reason", e["reason"]}});
    } else {
      return false;
    }
    return true;
  }

  bool node_event(const TraceEvent& e) {
    const TraceKind k = e.kind;
    const std::string job = string_field(e["job"]), node = string_field(e["node"]);
    if (k == TraceKind::node_registered) {
      const std::string ip = string_field(e["ip"]);
      node_process(node, node + " (" + ip + (job.empty() ? "" : ", job " + job) + ")");
      node_life_[node] = Open{"registered", e.t, {{"resources", e["resources"]}}};
    } else if (k == TraceKind::node_lost) {
      close_replicas([&](const Replica& r) { return r.node == node; }, e.t, "node lost");
      if (auto it = node_life_.find(node); it != node_life_.end()) {
        it->second.args["lost"] = e["reason"];
        b_.slice(node_pid_[node], 0, "registered", "node", it->second.from, e.t, it->second.args);
        node_life_.erase(it);
      }
    } else {
      return false;
    }
    return true;
  }

  void replica_event(const TraceEvent& e) {
    const TraceKind k = e.kind;
    const std::string app = string_field(e["app"]), node = string_field(e["node"]);
    if (k == TraceKind::replica_placed) {
      const int pid = node_process(node, node);
      const std::string label = string_field(e["replica"]);
      auto [it, fresh] = replica_tid_.emplace(std::make_pair(node, label), node_threads_[node] + 1);
      if (fresh) {
        ++node_threads_[node];
        b_.name_thread(pid, it->second, label);
      }
      replicas_.push_back(Replica{app, node, label, it->second, Open{"placed", e.t, e.fields}});
    } else if (k == TraceKind::replica_running) {
      for (auto& r : replicas_)
        if (r.node == node && r.label == string_field(e["replica"]) && r.open.name == "placed") {
          b_.slice(node_pid_[node], r.tid, "placed", "replica", r.open.from, e.t, r.open.args);
          r.open = Open{"running", e.t, {{"app", app}}};
          break;
        }
    } else if (k == TraceKind::replica_lost || k == TraceKind::replica_start_failed) {
      // The record names the app and node only: the oldest such replica goes.
      for (std::size_t i = 0; i < replicas_.size(); ++i)
        if (replicas_[i].app == app && replicas_[i].node == node) {
          close_replica(i, e.t, k == TraceKind::replica_lost ? "node lost" : "start failed");
          break;
        }
    }
  }

  int app_track(const std::string& app) {
    auto [it, fresh] = app_tid_.emplace(app, static_cast<int>(app_tid_.size()) + 1);
    if (fresh) b_.name_thread(kAppsPid, it->second, app);
    return it->second;
  }
  int job_track(const std::string& job) {
    auto [it, fresh] = job_tid_.emplace(job, static_cast<int>(job_tid_.size()) + 1);
    if (fresh) b_.name_thread(kJobsPid, it->second, "job " + job);
    return it->second;
  }
  int node_process(const std::string& node, const std::string& label) {
    auto [it, fresh] = node_pid_.emplace(node, kFirstNodePid + static_cast<int>(node_pid_.size()));
    if (fresh) {
      b_.name_process(it->second, label);
      b_.name_thread(it->second, 0, "node");
    }
    return it->second;
  }
  void close_app(const std::string& app, SimTime t) {
    if (auto it = app_state_.find(app); it != app_state_.end()) {
      b_.slice(kAppsPid, app_track(app), it->second.name, "app", it->second.from, t, it->second.args);
      app_state_.erase(it);
    }
  }
  void close_job(const std::string& job, SimTime t, Json extra = Json::object()) {
    if (auto it = job_state_.find(job); it != job_state_.end()) {
      it->second.args.update(extra);
      b_.slice(kJobsPid, job_track(job), it->second.name, "job", it->second.from, t, it->second.args);
      job_state_.erase(it);
    }
  }
  void close_replica(std::size_t i, SimTime t, const std::string& why) {
    Replica& r = replicas_[i];
    r.open.args["removed"] = why;
    b_.slice(node_pid_[r.node], r.tid, r.open.name, "replica", r.open.from, t, r.open.args);
    replicas_.erase(replicas_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  template <class Pred>
  void close_replicas(Pred pred, SimTime t, const std::string& why) {
    for (std::size_t i = replicas_.size(); i-- > 0;)
      if (pred(replicas_[i])) close_replica(i, t, why);
  }

  ChromeTraceBuilder b_;
  Json other_ = Json::object();
  std::map<std::string, int> app_tid_, job_tid_, node_pid_;
  std::map<std::string, Open> app_state_, job_state_, node_life_;
  std::vector<Replica> replicas_;                                   // open ones
  std::map<std::pair<std::string, std::string>, int> replica_tid_;  // (node, label) -> tid
  std::map<std::string, int> node_threads_;                         // node -> tids used
};

}  // namespace chrome_trace_detail

ChromeTraceConverter::ChromeTraceConverter() : tracks_(std::make_unique<chrome_trace_detail::TrackBuilder>()) {}
ChromeTraceConverter::~ChromeTraceConverter() = default;

void ChromeTraceConverter::add(const TraceEvent& e) { tracks_->add(e); }

Json ChromeTraceConverter::finish(SimTime end) { return tracks_->finish(end); }

void ChromeTraceConverter::write(SimTime end, const std::string& path) {
  OutputFile f(path);
  f.write(finish(end).dump(-1, ' ', false, Json::error_handler_t::replace));
  f.write("\n");
  f.close();
}

Json chrome_trace(const std::vector<TraceEvent>& events) {
  ChromeTraceConverter c;
  for (const auto& e : events) c.add(e);
  return c.finish(events.empty() ? 0 : events.back().t);
}

void write_chrome_trace(const std::vector<TraceEvent>& events, const std::string& path) {
  ChromeTraceConverter c;
  for (const auto& e : events) c.add(e);
  c.write(events.empty() ? 0 : events.back().t, path);
}

}  // namespace vramsim
