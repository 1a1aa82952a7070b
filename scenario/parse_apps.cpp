// $.apps and $.actions.
#include <algorithm>
#include <cmath>
#include <set>

#include "scenario/scenario_parse.hpp"

namespace vramsim::scenario_parse {

using scenario_fields::type_name;

AppSpec parse_app(Obj& o, const AppSpec* base, std::int64_t cuda_context_mb) {
  AppSpec a = base ? *base : AppSpec{};
  if (!base) a.cuda_context_mb = cuda_context_mb;
  a.cuda_context_mb = o.integer("cuda_context_mb", a.cuda_context_mb, 0, limits::kMaxCudaContextMb);
  a.id = o.string("id", a.id);
  if (a.id.empty()) o.fail(o.at("id"), "expected a non-empty app id");
  if (const Json* g = o.get("gpu_memory_mb")) {
    if (g->is_null()) a.gpu_memory_mb.reset();
    else if (!g->is_number_integer())
      o.fail(o.at("gpu_memory_mb"), "expected an integer number of MB >= 0, or -1 for a whole GPU, got " +
                                        std::string(type_name(*g)));
    else a.gpu_memory_mb = o.integer_value(*g, o.at("gpu_memory_mb"), -1, limits::kMaxVramMb);
  }
  if (const Json* g = o.get("num_gpus")) {
    // Ray's num_gpus: a share of one GPU, or whole GPUs (Ray refuses a
    // fraction above 1).
    const double n = o.number("num_gpus", 0, 0, static_cast<double>(limits::kMaxGpus));
    if (n <= 0 || (n > 1 && n != std::floor(n)))
      o.fail(o.at("num_gpus"), "expected a number in (0, 1] or a whole number up to " +
                                   std::to_string(limits::kMaxGpus) + ", got " + g->dump());
    a.num_gpus = n;
  }
  if (const Json* r = o.get("ray_serve")) {
    Obj ro(*r, o.at("ray_serve"), o.file());
    AppSpec::RayServeOrigin origin;
    origin.application = ro.string("application", "");
    origin.deployment = ro.string("deployment", "");
    origin.import_path = ro.string("import_path", "");
    for (const auto& [k, v] : {std::pair{"application", &origin.application}, {"deployment", &origin.deployment},
                                {"import_path", &origin.import_path}})
      if (v->empty()) ro.fail(ro.at(k), "expected a non-empty string");
    ro.finish();
    a.ray_serve = origin;
  }
  a.auto_redeploy = o.boolean("auto_redeploy", a.auto_redeploy);
  a.disable_gpu = o.boolean("disable_gpu", a.disable_gpu);
  a.cpus = o.number("cpus", a.cpus, 0, static_cast<double>(limits::kMaxCpus));
  // Bounded in MB first, so the byte count cannot overflow.
  a.memory_bytes = o.integer("memory_mb", a.memory_bytes / (1024 * 1024), 0, limits::kMaxMemoryMb) * 1024 * 1024;
  a.proxy_memory_bytes =
      o.integer("proxy_memory_mb", a.proxy_memory_bytes / (1024 * 1024), 0, limits::kMaxMemoryMb) * 1024 * 1024;
  a.replicas = static_cast<int>(o.integer("replicas", a.replicas, 1, limits::kMaxReplicas));
  if (o.has("observed_vram_mb")) a.observed_vram_mb = o.integer("observed_vram_mb", 0, 0, limits::kMaxVramMb);
  a.kind = o.string("kind", a.kind);
  if (a.kind != "plain" && a.kind != "probe")
    o.fail(o.at("kind"), "expected \"plain\" or \"probe\", got \"" + a.kind + "\"");
  if (a.num_gpus && a.gpu_memory_mb && *a.gpu_memory_mb != 0)
    o.fail(o.at(o.has("num_gpus") ? "num_gpus" : "gpu_memory_mb"),
           "expected num_gpus or gpu_memory_mb, not both (num_gpus is a Ray request taken as is; gpu_memory_mb is "
           "sized by BioEngine)");
  return a;
}

namespace {

void add_deploy_at(Obj& ao, Scenario& s, const std::string& app) {
  if (const Json* at = ao.get("deploy_at")) {
    ScenarioAction act;
    act.at = ao.parse_duration_value(*at, ao.at("deploy_at"));
    act.kind = ActionKind::Deploy;
    act.app = app;
    act.json_path = ao.at("deploy_at");
    s.actions.push_back(act);
  }
}

// An application of several deployments: each deployment an app
// "APP.NAME" of the application, the first its ingress (the application's
// traffic reaches it); `calls` names the deployments a request then calls.
void parse_application(Obj& ao, const Json& app, Scenario& s, AppsById& by_id) {
  const std::string id = ao.string("id", "");
  if (id.empty()) ao.fail(ao.at("id"), "expected a non-empty app id");
  if (by_id.count(id) || s.applications.count(id)) ao.fail(ao.at("id"), "duplicate app id '" + id + "'");
  const Json* ds = ao.get("deployments");
  if (!ds->is_array() || ds->empty() || ds->size() > 64)
    ao.fail(ao.at("deployments"), "expected a non-empty array (at most 64) of deployments");
  std::vector<std::string> names;
  for (std::size_t j = 0; j < ds->size(); ++j) {
    const std::string path = ao.at("deployments") + "[" + std::to_string(j) + "]";
    const Json& d = (*ds)[j];
    if (!d.is_object()) ao.fail(path, "expected an object (a deployment)");
    if (!d.contains("name") || !d["name"].is_string() || d["name"].get<std::string>().empty())
      ao.fail(path + ".name", "expected the deployment's name, a non-empty string");
    const std::string name = d["name"].get<std::string>();
    if (std::find(names.begin(), names.end(), name) != names.end())
      ao.fail(path + ".name", "duplicate deployment name '" + name + "'");
    names.push_back(name);
  }
  std::vector<std::string> members;
  for (std::size_t j = 0; j < ds->size(); ++j) {
    const std::string path = ao.at("deployments") + "[" + std::to_string(j) + "]";
    Json d = (*ds)[j];
    const std::string member = id + "." + d["name"].get<std::string>();
    d.erase("name");
    std::vector<std::string> calls;
    if (d.contains("calls")) {
      const Json c = d["calls"];
      d.erase("calls");
      if (!c.is_array()) ao.fail(path + ".calls", "expected an array of deployment names");
      for (std::size_t k = 0; k < c.size(); ++k) {
        const std::string at = path + ".calls[" + std::to_string(k) + "]";
        if (!c[k].is_string()) ao.fail(at, "expected a deployment name, a string");
        const std::string callee = c[k].get<std::string>();
        const auto pos = std::find(names.begin(), names.end(), callee);
        if (pos == names.end()) ao.fail(at, "unknown deployment '" + callee + "' (expected one of the app's deployments)");
        // Calls go down the list, so a request's path is finite.
        if (static_cast<std::size_t>(pos - names.begin()) <= j)
          ao.fail(at, "expected a deployment listed after this one ('" + callee + "' is not): calls go down the list");
        calls.push_back(id + "." + callee);
      }
    }
    if (d.contains("id")) ao.fail(path + ".id", "unknown field (a deployment has a name; its app id is " + member + ")");
    if (d.contains("deploy_at")) ao.fail(path + ".deploy_at", "unknown field (deploy_at is the app's)");
    d["id"] = member;
    Obj dobj(d, path, ao.file());
    AppSpec a = parse_app(dobj, nullptr, s.cuda_context_mb);
    parse_serve(dobj, a, s);
    if (j > 0 && s.traffic.count(member))
      dobj.fail(path + ".serve.traffic", "expected traffic only on the first deployment, the app's ingress");
    if (!calls.empty() && !a.serve)
      dobj.fail(path + ".calls", "expected a serve object on a deployment that calls others (its requests do)");
    for (const auto& c : calls) {
      const std::size_t k = static_cast<std::size_t>(std::find(names.begin(), names.end(), c.substr(id.size() + 1)) -
                                                     names.begin());
      if (!(*ds)[k].contains("serve"))
        dobj.fail(path + ".calls", "expected a serve object on '" + names[k] + "', which this deployment calls");
    }
    dobj.finish();
    a.application = id;
    a.calls = std::move(calls);
    if (by_id.count(member)) ao.fail(path + ".name", "duplicate app id '" + member + "'");
    by_id[member] = a;
    s.apps.push_back(a);
    members.push_back(member);
  }
  s.applications[id] = members;
  for (auto& a : s.apps)
    if (a.application == id) a.application_members = members;
  for (const auto& m : members) by_id[m].application_members = members;
  for (const auto& m : members) add_deploy_at(ao, s, m);
  (void)app;
  ao.finish();
}

}  // namespace

void parse_apps(Obj& root, Scenario& s, AppsById& by_id) {
  for (const auto& a : s.apps) by_id[a.id] = a;  // a workload's apps
  const Json* apps = root.get("apps");
  if (!apps) return;
  if (!apps->is_array()) root.fail(root.at("apps"), "expected an array of apps");
  for (std::size_t i = 0; i < apps->size(); ++i) {
    Obj ao((*apps)[i], "$.apps[" + std::to_string(i) + "]", root.file());
    if (ao.has("deployments")) {
      parse_application(ao, (*apps)[i], s, by_id);
      continue;
    }
    AppSpec a = parse_app(ao, nullptr, s.cuda_context_mb);
    parse_serve(ao, a, s);
    if (by_id.count(a.id) || s.applications.count(a.id)) ao.fail(ao.at("id"), "duplicate app id '" + a.id + "'");
    add_deploy_at(ao, s, a.id);
    ao.finish();
    by_id[a.id] = a;
    s.apps.push_back(a);
  }
}

namespace {

// A deploy action's app fields change the app for this (re)deploy.
void parse_deploy_override(Obj& ao, const Json& action, ScenarioAction& act, const AppsById& by_id) {
  static const std::vector<std::string> keys = {"gpu_memory_mb", "disable_gpu", "cpus", "memory_mb",
                                                "replicas", "observed_vram_mb", "cuda_context_mb"};
  bool changed = false;
  for (const auto& k : keys) changed = changed || ao.has(k);
  if (!changed) return;
  Json sub = Json::object();
  for (const auto& k : keys)
    if (ao.has(k)) sub[k] = action[k];
  for (const auto& k : keys) ao.get(k);
  Obj so(sub, ao.path(), ao.file());
  act.app_override = parse_app(so, &by_id.at(act.app), 0);
}

ScenarioAction parse_action(const Json& action, const std::string& path, const std::string& file,
                            const AppsById& by_id, const Scenario& s) {
  Obj ao(action, path, file);
  ScenarioAction act;
  act.json_path = path;
  act.at = ao.duration("at", 0);
  const std::string word = ao.string("do", "");
  const auto kind = action_kind_named(word);
  if (!kind) ao.fail(ao.at("do"), "expected one of: deploy, stop, delete, shutdown, status, call; got \"" + word + "\"");
  act.kind = *kind;
  if (act.kind == ActionKind::Deploy || act.kind == ActionKind::Stop || act.kind == ActionKind::Delete ||
      act.kind == ActionKind::Call) {
    act.app = ao.string("app", "");
    if (!by_id.count(act.app) && !s.applications.count(act.app))
      ao.fail(ao.at("app"), "unknown app '" + act.app + "' (declare it in $.apps)");
  }
  if (act.kind == ActionKind::Deploy && s.applications.count(act.app)) {
    for (const char* k : {"gpu_memory_mb", "disable_gpu", "cpus", "memory_mb", "replicas", "observed_vram_mb",
                          "cuda_context_mb"})
      if (ao.has(k))
        ao.fail(ao.at(k), "expected a deployment's app id (" + act.app + ".NAME) for a deploy that changes its fields");
  } else if (act.kind == ActionKind::Deploy) {
    parse_deploy_override(ao, action, act, by_id);
  }
  if (act.kind == ActionKind::Call) {
    if (const Json* p = ao.get("payload")) {
      if (!p->is_object()) ao.fail(ao.at("payload"), "expected an object (the request sent to the replica)");
      act.payload = *p;
    }
  }
  if (act.kind == ActionKind::Shutdown && ao.boolean("blocking", false)) {
    // BioEngineWorker(graceful_shutdown_timeout=60), worker.py:165@fba5ffe.
    act.blocking_timeout = ao.duration("graceful_shutdown_timeout", 60 * kSecond);
    if (*act.blocking_timeout <= 0 || *act.blocking_timeout > limits::kMaxShutdownTimeout)
      ao.fail(ao.at("graceful_shutdown_timeout"), "expected a duration above 0 and at most 1 hour");
  }
  if (act.kind == ActionKind::Status) {
    if (const Json* e = ao.get("expect")) {
      if (!e->is_object()) ao.fail(ao.at("expect"), "expected an object of status field path -> value");
      act.expect = *e;
    }
  }
  ao.finish();
  return act;
}

}  // namespace

void parse_actions(Obj& root, Scenario& s, const AppsById& by_id) {
  if (const Json* acts = root.get("actions")) {
    if (!acts->is_array()) root.fail(root.at("actions"), "expected an array of actions");
    for (std::size_t i = 0; i < acts->size(); ++i) {
      ScenarioAction act = parse_action((*acts)[i], "$.actions[" + std::to_string(i) + "]", root.file(), by_id, s);
      // On an application of several deployments: each deployment in turn
      // (a call goes to its ingress).
      auto members = s.applications.find(act.app);
      if (members == s.applications.end()) {
        s.actions.push_back(std::move(act));
        continue;
      }
      for (const auto& m : members->second) {
        ScenarioAction one = act;
        one.app = m;
        s.actions.push_back(std::move(one));
        if (act.kind == ActionKind::Call) break;
      }
    }
  }
  std::stable_sort(s.actions.begin(), s.actions.end(),
                   [](const ScenarioAction& a, const ScenarioAction& b) { return a.at < b.at; });
}

}  // namespace vramsim::scenario_parse
