// The cause rules of `vramsim explain`: from a trace's facts, why each app
// is (not) RUNNING (code, resource, needed, offered, policy variant), what
// the run as a whole shows, and what each cold start waited for.
#include <algorithm>
#include <map>
#include <set>

#include "analysis/explain_facts.hpp"
#include "engine/format.hpp"

namespace vramsim::explain_detail {
namespace {

Cause make(std::string code, bool blocking, std::string sentence) {
  Cause c;
  c.code = std::move(code);
  c.blocking = blocking;
  c.sentence = std::move(sentence);
  return c;
}

void set_policy(Cause& c, const RunFacts& f, const std::string& model) {
  c.policy = model;
  c.variant = f.variant(model);
  if (!c.variant.empty()) c.sentence += " (" + model + "=" + c.variant + ")";
}

// " (node-1: nvidia-smi not found; ...)": why workers registered by `t`
// started without VRAM_MB, where their advertisement step says so.
std::string notices_by(const RunFacts& f, SimTime t) {
  std::vector<std::string> notices;
  for (const auto& n : f.nodes) {
    if (n.joined > t || n.head()) continue;
    if (auto it = f.notice_of_job.find(n.job); it != f.notice_of_job.end() && !it->second.empty())
      notices.push_back(n.name + ": " + it->second);
    else if (f.variant("advertisement") == "fixed" && n.offers("GPU") > 1 && n.offers("VRAM_MB") <= 0)
      notices.push_back(n.name + " has " + format_number(n.offers("GPU")) +
                        " GPUs: VRAM_MB is advertised by single-GPU workers only");
  }
  return notices.empty() ? "" : " (" + join(notices) + ")";
}

// How the app was sized; notes whether or not it reached RUNNING.
void sizing_notes(const Attempt& a, const RunFacts& f, std::vector<Cause>& out) {
  if (!a.sizing) return;
  const TraceEvent& s = *a.sizing;
  const double gmb = json_number(a.request->fields.value("gpu_memory_mb", Json()));
  const std::string branch = string_field(s["branch"]);
  if (branch == "error") {
    Cause c = make("sizing_error", true, "sizing failed: " + string_field(s["error"]));
    c.resource = "VRAM_MB";
    c.needed = gmb;
    if (s["min_gpu_total_mb"].is_number()) c.offered = json_number(s["min_gpu_total_mb"]);
    set_policy(c, f, "sizing");
    out.push_back(std::move(c));
  } else if (branch == "fraction" && gmb > 0 && !flag(s["vram_advertised"])) {
    Cause c = make("sized_without_vram", false,
                   "sized as " + format_number(json_number(s["num_gpus"])) + " GPU, a fraction of the smallest GPU (" +
                       format_number(json_number(s["min_gpu_total_mb"])) + " MB), not packed by VRAM: no registered node "
                       "advertised VRAM_MB at " + seconds(s.t) + notices_by(f, s.t));
    c.resource = "VRAM_MB";
    c.needed = gmb;
    c.offered = 0;
    set_policy(c, f, "advertisement");
    out.push_back(std::move(c));
  } else if (branch == "whole_gpu_fallback") {
    bool workers = false;  // any worker registered by then
    for (const auto& n : f.nodes) workers = workers || (!n.head() && n.joined <= s.t);
    std::string joined;
    if (a.admission && flag((*a.admission)["admitted"]))
      for (const auto& n : f.nodes)
        if (!n.head() && n.offers("GPU") > 0 && n.joined > s.t) {
          joined = "; " + n.name + " joined with a GPU at " + seconds(n.joined) + " and the reservation was kept";
          break;
        }
    Cause c = make("whole_gpu_locked_in", false,
                   "a whole GPU reserved per replica for " + format_number(gmb) +
                       " MB: no GPU was visible at deploy time" +
                       (workers ? "" : " on a cluster scaled to zero workers") + joined);
    c.resource = "GPU";
    c.needed = json_number(s["num_gpus"]);
    set_policy(c, f, "sizing");
    out.push_back(std::move(c));
  }
  // The app's summed GPU demand as admission saw it (legacy truncates it).
  if (a.admission && a.request) {
    // The check sums one replica of the app's deployment class, whatever
    // its replica count (AppBuilder._sum_resources).
    const double sum = json_number(s["num_gpus"]);
    const Json& req = (*a.admission)["requested"];
    const double seen = req.is_object() ? json_number(req.value("gpus", Json())) : 0;
    if (sum > 0 && seen + 1e-9 < sum) {
      const std::string how = string_field((*a.admission)["reason"]) == "node_with_room" && seen == 0
                                  ? ", so its search for a node with room ignored GPUs"
                                  : "";
      Cause c = make("gpu_sum_truncated", false,
                     "admission saw GPU demand summed to " + format_number(seen) + ": 1 replica(s) x " +
                         format_number(sum) + " GPU truncated to an integer" + how);
      c.resource = "GPU";
      c.needed = sum;
      c.offered = seen;
      set_policy(c, f, "sizing");
      out.push_back(std::move(c));
    }
  }
}

// A scale-up whose GPU demand became a job of 0 GPUs (the legacy
// autoscaler's truncation), with the job sbatch accepted for it and the
// node that job became.
Cause cpu_only_worker(const std::vector<TraceEvent>& events, std::size_t i, double gpu, const RunFacts& f) {
  const TraceEvent& e = events[i];
  // The job sbatch accepted for this decision, at the same instant.
  std::string job, node;
  for (std::size_t j = i + 1; j < events.size() && events[j].t == e.t; ++j)
    if (events[j].kind == TraceKind::job_submitted) {
      job = string_field(events[j]["job"]);
      break;
    }
  if (auto it = f.node_of_job.find(job); it != f.node_of_job.end()) node = it->second;
  Cause c = make("cpu_only_worker", true,
                 "stuck on a CPU-only node: GPU demand " + format_number(gpu) + " truncated to 0, so worker job " +
                     (job.empty() ? "(none)" : job) + " asked for 0 GPUs" +
                     (node.empty() ? "" : " and " + node + " joined without one"));
  c.resource = "GPU";
  c.needed = gpu;
  c.offered = 0;
  c.detail["job"] = job;
  c.detail["node"] = node;
  set_policy(c, f, "autoscaler");
  return c;
}

// Worker jobs asked for after the deploy, and what became of them by the cutoff.
struct WorkerJobs {
  int refused = 0;
  std::string refusal;               // the first refusal's error
  std::vector<std::string> waiting;  // submitted, neither registered nor ended
  std::map<std::string, std::string> held;  // waiting job -> SLURM's last pending reason (live runs)
  std::vector<const TraceEvent*> failed;    // ended before their node registered, not cancelled
};

WorkerJobs worker_jobs_since(const std::vector<TraceEvent>& events, const Attempt& a, const RunFacts& f,
                             SimTime cutoff, std::vector<Cause>& out) {
  WorkerJobs w;
  std::set<std::string> done, registered;  // registered or ended; registered
  const auto first = std::lower_bound(f.job_events.begin(), f.job_events.end(), a.from);
  for (auto it = first; it != f.job_events.end() && events[*it].t <= cutoff; ++it) {
    const TraceEvent& e = events[*it];
    if (e.kind == TraceKind::job_ended || (e.kind == TraceKind::node_registered && !string_field(e["job"]).empty())) done.insert(string_field(e["job"]));
    if (e.kind == TraceKind::node_registered) registered.insert(string_field(e["job"]));
    if (e.kind == TraceKind::job_pending) w.held[string_field(e["job"])] = string_field(e["reason"]);
    if (e.kind == TraceKind::job_ended && !registered.count(string_field(e["job"])) && e["state"] != "CANCELLED" &&
        e["state"] != "COMPLETED")
      w.failed.push_back(&e);
  }
  for (auto it = first; it != f.job_events.end() && events[*it].t <= cutoff; ++it) {
    const TraceEvent& e = events[*it];
    if (e.kind == TraceKind::job_rejected) {
      if (w.refused++ == 0) w.refusal = string_field(e["error"]);
    } else if (e.kind == TraceKind::job_submitted) {
      if (!done.count(string_field(e["job"]))) w.waiting.push_back(string_field(e["job"]));
    } else if (e.kind == TraceKind::scale_up) {
      const Json& d = e["demand"];
      const double gpu = d.is_object() ? json_number(d.value("GPU", Json())) : 0;
      if (gpu <= 0 || json_number(e["gpus"], 1) != 0) continue;
      out.push_back(cpu_only_worker(events, *it, gpu, f));
      break;
    }
  }
  return w;
}

// A request's resource that no node (or no node that joined) offers.
Cause missing_resource(const std::string& r, double need, double largest, const std::vector<std::string>& lacking,
                       const RunFacts& f, SimTime cutoff) {
  std::string s = "pending: needs " + r + " " + format_number(need) + "; ";
  if (!lacking.empty() && r == "VRAM_MB") {
    s += join(lacking) + (lacking.size() == 1 ? " has" : " have") + " a GPU but " +
         (lacking.size() == 1 ? "advertises" : "advertise") + " no " + r;
  } else {
    s += "no registered node " + std::string(r == "VRAM_MB" ? "advertises " : "offers ") + r;
  }
  Cause c;
  if (r == "VRAM_MB") {
    s += notices_by(f, cutoff);
    c = make("vram_not_advertised", true, s);
    set_policy(c, f, "advertisement");
    c.detail["nodes"] = lacking;
  } else {
    c = make("resource_missing", true, s);
  }
  c.resource = r;
  c.needed = need;
  c.offered = largest;
  return c;
}

// Per resource the request needs: which nodes offer it, and how much. With
// no worker on its way, a resource no node offers is the cause itself;
// otherwise only what the nodes that did join lack. Returns whether some
// node could hold the request at all.
bool resource_causes(const Json& request, const std::vector<const RegisteredNode*>& nodes, bool none_coming,
                     const RunFacts& f, SimTime cutoff, std::vector<Cause>& out) {
  bool some_node_fits = false;
  for (const RegisteredNode* n : nodes) {
    bool fits = true;
    for (const auto& [r, v] : request.items())
      if (json_number(v) > 0 && n->offers(r) + 1e-9 < json_number(v)) fits = false;
    some_node_fits = some_node_fits || fits;
  }
  for (const auto& [r, v] : request.items()) {
    const double need = json_number(v);
    if (need <= 0) continue;
    double largest = 0;
    std::vector<std::string> lacking;  // worker nodes with a GPU that do not offer it
    for (const RegisteredNode* n : nodes) {
      largest = std::max(largest, n->offers(r));
      if (!n->head() && n->offers("GPU") > 0 && n->offers(r) <= 0) lacking.push_back(n->name);
    }
    if (largest > 0 && largest + 1e-9 < need) {
      Cause c = make("exceeds_largest_node", true,
                     "pending forever: needs " + r + " " + format_number(need) + ", the largest node offers " +
                         format_number(largest));
      c.resource = r;
      c.needed = need;
      c.offered = largest;
      out.push_back(std::move(c));
    } else if ((largest <= 0 && none_coming) || (r == "VRAM_MB" && !lacking.empty() && !some_node_fits)) {
      out.push_back(missing_resource(r, need, largest, lacking, f, cutoff));
    }
  }
  return some_node_fits;
}

// Why an admitted app's replicas never all ran: what the trace shows up to
// `cutoff` (the stop of the app, or the end of the trace).
void pending_causes(const std::vector<TraceEvent>& events, const Attempt& a, const RunFacts& f, SimTime cutoff,
                    std::vector<Cause>& out) {
  const std::size_t before = out.size();
  if (a.start_failed) {
    Cause c = make("replica_start_failed", true,
                   "the replica could not start on " + string_field((*a.start_failed)["node"]) + ": " +
                       string_field((*a.start_failed)["error"]));
    c.detail["node"] = string_field((*a.start_failed)["node"]);
    out.push_back(std::move(c));
  }
  Json request = a.unplaced.empty() ? (a.submitted ? (*a.submitted)["resources"] : Json())
                                    : (*a.unplaced.front())["request"];
  if (!request.is_object()) return;
  std::vector<const RegisteredNode*> nodes;  // registered by the cutoff
  for (const auto& n : f.nodes)
    if (n.joined <= cutoff) nodes.push_back(&n);

  const WorkerJobs w = worker_jobs_since(events, a, f, cutoff, out);
  if (w.refused > 0) {
    Cause c = make("sbatch_refused", true,
                   "pending: sbatch refused " + std::to_string(w.refused) + " worker job(s): " + w.refusal);
    c.detail["refusals"] = w.refused;
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(before), std::move(c));
  }
  if (!w.failed.empty()) {
    const TraceEvent& last = *w.failed.back();
    Cause c = make("worker_job_failed", true,
                   "pending: " + std::to_string(w.failed.size()) + " worker job(s) ended before their node " +
                       "registered; the last, " + string_field(last["job"]) + ", " + string_field(last["state"]) + ": " +
                       string_field(last["reason"]));
    c.detail["jobs"] = static_cast<int>(w.failed.size());
    out.push_back(std::move(c));
  }
  if (!w.waiting.empty()) {
    std::string held;
    Json reasons = Json::object();
    for (const auto& j : w.waiting)
      if (auto r = w.held.find(j); r != w.held.end()) {
        held += (held.empty() ? "" : ", ") + ("job " + j + " PENDING: " + r->second);
        reasons[j] = r->second;
      }
    Cause c = make("waiting_for_worker", true,
                   "pending: waiting for worker job " + join(w.waiting) + " to start and register at " +
                       seconds(cutoff) + (held.empty() ? "" : "; SLURM holds it back (" + held + ")"));
    c.detail["jobs"] = w.waiting;
    if (!reasons.empty()) c.detail["slurm_reasons"] = reasons;
    out.push_back(std::move(c));
  }
  const bool none_coming = w.waiting.empty() && w.refused == 0;
  const bool some_node_fits = resource_causes(request, nodes, none_coming, f, cutoff, out);
  if (out.size() > before) return;
  if (some_node_fits) {
    out.push_back(make("waiting_for_room", true,
                       "pending: a registered node could hold it but had no room left at " + seconds(cutoff)));
  } else if (!a.unplaced.empty()) {
    out.push_back(make("unplaceable", true, string_field((*a.unplaced.front())["reason"])));
  }
}

// A replica whose constructor ran out of CUDA memory: the booking beside
// what the device holds. The last such failure of the app, and their count.
std::optional<Cause> out_of_memory_cause(const std::vector<TraceEvent>& events, const std::string& app) {
  const TraceEvent* last = nullptr;
  const TraceEvent* failed = nullptr;
  int count = 0;
  for (const auto& e : events) {
    if (e.kind == TraceKind::replica_failed && string_field(e["app"]) == app) {
      last = &e;
      ++count;
    }
    if (e.kind == TraceKind::deployment_failed && string_field(e["app"]) == app) failed = &e;
  }
  if (!last) return std::nullopt;
  const TraceEvent& e = *last;
  const double total = json_number(e["device_total_mb"]), held = json_number(e["held_mb"]),
               need = json_number(e["needed_mb"]), ctx = json_number(e["context_mb"]),
               n = json_number(e["replicas_held"]) + 1;
  std::string sum;
  // Uniform replicas: "5 x (8000 + 680) = 43400"; else held + needed.
  if (held == (n - 1) * need)
    sum = format_number(n) + " x (" + format_number(need - ctx) + " + " + format_number(ctx) + ") = " +
          format_number(n * need);
  else
    sum = format_number(held) + " held + " + format_number(need) + " = " + format_number(held + need);
  std::string booking;
  if (json_number(e["vram_booked_mb"]) > 0)
    booking = "booked " + format_number(json_number(e["vram_booked_mb"])) + "/" +
              format_number(json_number(e["vram_total_mb"])) + " MB, ";
  Cause c = make("cuda_out_of_memory", true,
                 "replica " + string_field(e["replica"]) + " failed in its constructor on device " +
                     format_number(json_number(e["device"])) + " of " + string_field(e["node"]) + " at " +
                     seconds(e.t) + ": " + string_field(e["reason"]) + " (" + booking + "device holds " +
                     format_number(total) + " MiB; " + sum + "); " + std::to_string(count) + " failed start(s)" +
                     (failed ? ", then the deployment failed" : ", retried while other replicas run"));
  c.resource = "device_memory_mb";
  c.needed = held + need;
  c.offered = total;
  c.detail = {{"node", string_field(e["node"])}, {"device", e["device"]}, {"failures", count}};
  return c;
}

}  // namespace

std::vector<Cause> app_causes(const std::vector<TraceEvent>& events, const std::string& app, bool running,
                              const RunFacts& f, std::string& state) {
  const Attempt a = last_attempt(events, f.by_app.at(app));
  state = a.state;
  std::vector<Cause> blocking, notes;
  sizing_notes(a, f, notes);
  if (!running) {
    if (a.cancelled) {
      Cause c = make("deploy_cancelled", true,
                     "deploy " + std::string(a.cancelled->kind == TraceKind::deploy_ignored ? "ignored" : "cancelled") + ": " +
                         string_field((*a.cancelled)["reason"]));
      blocking.push_back(std::move(c));
    } else if (a.admission && !flag((*a.admission)["admitted"])) {
      const TraceEvent& ad = *a.admission;
      const double jobs = json_number(ad["worker_jobs"]), unregistered = json_number(ad["unregistered_jobs"]),
                   max_workers = json_number(ad["max_workers"]);
      Cause c;
      if (unregistered > 0 && jobs >= max_workers && f.variant("admission") != "fixed") {
        c = make("admission_counts_in_flight", true,
                 "rejected at admission: worker_jobs=" + format_number(jobs) + " counted as used, though " +
                     format_number(unregistered) + " of them had no registered node yet (capacity in flight)");
      } else {
        c = make("admission_insufficient", true,
                 "rejected at admission: no registered node had room and worker_jobs=" + format_number(jobs) +
                     " of max_workers=" + format_number(max_workers) + ": " + string_field(ad["message"]));
      }
      c.resource = "worker_jobs";
      c.needed = jobs + 1;
      c.offered = max_workers;
      c.detail = {{"worker_jobs", jobs}, {"unregistered_jobs", unregistered}, {"max_workers", max_workers}};
      set_policy(c, f, "admission");
      blocking.push_back(std::move(c));
    } else if (!a.admission) {
      bool sizing_failed = false;
      for (const auto& n : notes) sizing_failed = sizing_failed || n.code == "sizing_error";
      if (!sizing_failed)
        blocking.push_back(make("not_admitted", true,
                                "waiting for admission: the deploy is queued or in introspection when the trace ends "
                                "at " + seconds(events.back().t)));
    } else {
      bool failed_for_good = false;
      if (auto oom = out_of_memory_cause(events, app)) {
        failed_for_good = a.state == "DEPLOY_FAILED";
        blocking.push_back(std::move(*oom));
      }
      SimTime cutoff = events.back().t;
      if (a.stopped) {
        cutoff = a.stopped->t;
        blocking.push_back(make("stopped_before_running", true,
                                "stopped at " + seconds(cutoff) + " (" + string_field((*a.stopped)["reason"]) +
                                    ") before it reached RUNNING"));
      }
      // A deployment that failed for good withdrew its replicas: nothing of
      // it is pending any more.
      if (!failed_for_good) pending_causes(events, a, f, cutoff, blocking);
      if (blocking.empty())
        blocking.push_back(make("not_running", true, "admitted, but never reached RUNNING (final state " + a.state + ")"));
    }
  }
  // A sizing error blocks; keep it with the blocking causes.
  for (auto& n : notes)
    if (n.blocking) blocking.insert(blocking.begin(), n);
  std::erase_if(notes, [](const Cause& c) { return c.blocking; });
  blocking.insert(blocking.end(), notes.begin(), notes.end());
  return blocking;
}

std::vector<Cause> run_findings(const std::vector<TraceEvent>& events, const RunFacts& f) {
  std::vector<Cause> out;
  const TraceEvent* plan = nullptr;
  const TraceEvent* forced = nullptr;  // a blocking stop's limit
  std::map<std::string, const TraceEvent*> ended;
  for (const auto& e : events) {
    if (e.kind == TraceKind::shutdown_plan) plan = &e;
    if (e.kind == TraceKind::shutdown_force_exit) forced = &e;
    if (e.kind == TraceKind::job_ended) ended[string_field(e["job"])] = &e;
    if (e.kind == TraceKind::device_vram_overbooked) {
      Cause c = make("device_overbooked", false,
                     "device " + format_number(json_number(e["device"])) + " of " + string_field(e["node"]) + " booked " +
                         format_number(json_number(e["booked_mb"])) + " of " + format_number(json_number(e["total_mb"])) +
                         " MB for " + string_field(e["app"]) + ": node-level VRAM_MB sums the node's GPUs");
      c.resource = "VRAM_MB";
      c.needed = json_number(e["booked_mb"]);
      c.offered = json_number(e["total_mb"]);
      c.detail = {{"node", string_field(e["node"])}, {"device", e["device"]}, {"app", string_field(e["app"])}};
      set_policy(c, f, "advertisement");
      out.push_back(std::move(c));
    }
    if (e.kind == TraceKind::shutdown_done && e["jobs_left"].is_array() && !e["jobs_left"].empty()) {
      std::vector<std::string> jobs, fates;
      for (const auto& j : e["jobs_left"]) jobs.push_back(string_field(j));
      std::string why = "the shutdown plan did not cancel them";
      if (forced)
        why = "the blocking stop's limit of " + seconds(static_cast<SimTime>(json_number((*forced)["after_us"]))) +
              " forced the process out before its cleanup cancelled them";
      else if (plan && flag((*plan)["return_early"]))
        why = "close_all returned early" + (string_field((*plan)["note"]).empty() ? "" : " (" + string_field((*plan)["note"]) + ")");
      else if (plan && !flag((*plan)["cancel_remaining"]))
        why = "close_all did not cancel the remaining jobs";
      Cause c = make("jobs_left_after_shutdown", false,
                     "shutdown at " + seconds(e.t) + " left job(s) " + join(jobs) + " behind: " + why);
      c.resource = "worker_jobs";
      c.needed = 0;
      c.offered = static_cast<double>(jobs.size());
      c.detail["jobs"] = jobs;
      c.detail["at_us"] = e.t;
      set_policy(c, f, "shutdown");
      out.push_back(std::move(c));
    }
  }
  // Scale-ups made only for replicas installing their runtime env (the
  // fifth defect): what became of each such job.
  for (std::size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& up = events[i];
    if (up.kind != TraceKind::scale_up || !up.fields.contains("for_installing")) continue;
    std::vector<std::string> replicas;
    for (const auto& r : up["for_installing"]) replicas.push_back(string_field(r));
    std::string job, node, fate = "still held when the trace ends";
    SimTime started = -1;
    int placed = 0;
    for (std::size_t k = i + 1; k < events.size(); ++k) {
      const TraceEvent& e = events[k];
      if (job.empty()) {
        if (e.kind == TraceKind::job_submitted) job = string_field(e["job"]);
        else if (e.kind == TraceKind::worker_creation_failed || e.kind == TraceKind::job_rejected) break;
        continue;
      }
      if (string_field(e.fields.value("job", Json())) != job) continue;
      if (e.kind == TraceKind::job_started) started = e.t;
      else if (e.kind == TraceKind::node_registered) node = string_field(e["node"]);
      else if (e.kind == TraceKind::replica_placed) ++placed;
      else if (e.kind == TraceKind::job_ended) {
        fate = "ended " + string_field(e["state"]) + " at " + seconds(e.t) +
               (started >= 0 ? " (" + format_number(static_cast<double>(e.t - started) / kSecond) + " s after it started)" : "");
        break;
      }
    }
    if (job.empty()) continue;
    std::string sentence = "scale-up at " + seconds(up.t) + " (job " + job + ") only for " + join(replicas) +
                           ", placed and still installing its runtime env or in its constructor, which "
                           "_get_pending_actors lists as pending demand: ";
    sentence += node.empty() ? "its node never registered" : "its node " + node + (placed ? " took " + std::to_string(placed) + " replica(s) later" : " held no replica");
    sentence += "; the job " + fate;
    Cause c = make("installing_counted_as_pending", false, sentence);
    c.resource = "worker_jobs";
    c.detail = {{"job", job}, {"at_us", up.t}, {"replicas", replicas}, {"node", node}, {"replicas_placed", placed}};
    c.policy = "pending";
    c.variant = f.variant("pending").empty() ? "counts-installing" : f.variant("pending");
    c.sentence += " (pending=" + c.variant + ")";
    out.push_back(std::move(c));
  }
  // Fates of the jobs left behind, once the whole trace is read.
  for (auto& c : out) {
    if (c.code != "jobs_left_after_shutdown") continue;
    std::vector<std::string> fates;
    for (const auto& j : c.detail["jobs"]) {
      const std::string job = string_field(j);
      if (auto it = ended.find(job); it != ended.end())
        fates.push_back("job " + job + " ended " + string_field((*it->second)["state"]) + " at " + seconds(it->second->t));
      else
        fates.push_back("job " + job + " still held when the trace ends");
    }
    c.sentence += "; " + join(fates);
  }
  return out;
}

// The cold starts of a serving app: for each request_cold_start, what
// happened between the request's arrival and a replica taking it. Worker
// jobs count only until that replica is placed: a scale-up while it
// installs (the installing replica is pending demand, docs/models.md) is
// not on its path.
std::vector<ColdStartRequest> cold_starts(const std::vector<TraceEvent>& events, const std::string& id) {
  std::vector<ColdStartRequest> out;
  for (const auto& ev : events) {
    if (ev.kind != TraceKind::request_cold_start || string_field(ev["app"]) != id) continue;
    ColdStartRequest c;
    c.arrived = ev["arrived_us"].get<SimTime>();
    c.dispatched = ev["dispatched_us"].get<SimTime>();
    c.answered = ev.t;
    c.replica = string_field(ev["replica"]);
    bool placed = false;  // the replica that took the request
    for (const auto& e : events) {
      if (e.t < c.arrived || e.t > c.dispatched) continue;
      const bool mine = e.fields.contains("app") && string_field(e["app"]) == id;
      std::string what;
      if (e.kind == TraceKind::replica_target && mine)
        what = "replica autoscaler: target " + e["from"].dump() + " -> " + e["to"].dump();
      else if (placed && e.kind != TraceKind::replica_running)
        continue;
      else if (e.kind == TraceKind::scale_up)
        what = "workers monitor: scale-up, a worker job of " + e["gpus"].dump() + " GPU";
      else if (e.kind == TraceKind::job_submitted)
        what = "sbatch: job " + string_field(e["job"]) + " submitted";
      else if (e.kind == TraceKind::job_started)
        what = "SLURM: job " + string_field(e["job"]) + " started (queue wait over)";
      else if (e.kind == TraceKind::node_registered && !string_field(e["job"]).empty())
        what = "node " + string_field(e["node"]) + " registered (job " + string_field(e["job"]) + ")";
      else if (e.kind == TraceKind::replica_placed && mine) {
        what = "replica " + string_field(e["replica"]) + " placed on " + string_field(e["node"]);
        placed = placed || string_field(e["replica"]) == c.replica;
      }
      else if (e.kind == TraceKind::replica_running && mine)
        what = "replica " + string_field(e["replica"]) + " running (runtime env and init done)";
      if (!what.empty()) c.steps.emplace_back(e.t, what);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace vramsim::explain_detail
