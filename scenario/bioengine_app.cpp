// BioEngine apps: the manifest's checks and the decorator's keywords as
// BioEngine turns them into Ray Serve options (aicell-lab/bioengine at
// 03b490c: bioengine/_app/decorators.py, bioengine/apps/builder.py,
// bioengine/utils/artifact_utils.py), then the Serve import.
#include "scenario/bioengine_app.hpp"

#include <algorithm>
#include <regex>
#include <set>

#include "engine/format.hpp"
#include "scenario/yaml_document.hpp"

namespace vramsim {

namespace {


// The decorator's own keywords (decorators.py:196-207@03b490c); any other
// passes to serve.deployment as it is.
const std::set<std::string>& decorator_keywords() {
  static const std::set<std::string> k = {"num_cpus",    "num_gpus", "gpu_memory_mb",        "memory_mb",
                                          "pip",         "env_vars", "container_image",      "max_ongoing_requests",
                                          "ray_actor_options"};
  return k;
}

// _deep_merge (decorators.py:462-473): mappings merge key by key, the rest replaces.
void deep_merge(Json& into, const Json& over) {
  for (auto it = over.begin(); it != over.end(); ++it) {
    if (it.value().is_object() && into.contains(it.key()) && into[it.key()].is_object())
      deep_merge(into[it.key()], it.value());
    else into[it.key()] = it.value();
  }
}

}  // namespace

std::string bioengine_manifest_entry(const std::string& manifest_text, const std::string& manifest_file) {
  const YamlDocument doc = read_yaml(manifest_text, manifest_file);
  const Json& m = doc.value;
  auto fail = [&](const std::string& path, const std::string& problem) {
    throw ScenarioError(manifest_file, doc.where(path), problem);
  };
  if (!m.is_object()) fail("", "expected a mapping (a BioEngine app manifest)");
  const std::string migrate =
      "the importer reads format 0.6.0 (BioEngine 0.11 and later, since 50be023: entry: module:Class and "
      "@bioengine.app); an app in an older format lists its deployments in the manifest";
  if (!m.contains("format_version")) fail("format_version", "expected format_version 0.6.0; " + migrate);
  const Json& fv = m["format_version"];
  const std::string version = fv.is_string() ? fv.get<std::string>() : fv.dump();
  if (version != "0.6.0") {
    if (version.rfind("0.4", 0) == 0 || version.rfind("0.5", 0) == 0)
      fail("format_version", "format " + version + " is not read: " + migrate);
    fail("format_version", "expected 0.6.0 (BioEngine's SUPPORTED_FORMAT_VERSION), got " + version);
  }
  if (m.contains("deployments"))
    fail("deployments", "expected no deployments in a 0.6.0 manifest (BioEngine follows the entry's type hints)");
  for (const char* key : {"name", "id", "id_emoji", "description", "type", "entry"})
    if (!m.contains(key)) fail(key, std::string("expected the manifest field ") + key + " (BioEngine requires it)");
  if (m["type"] != "ray-serve") fail("type", "expected ray-serve, got " + m["type"].dump());
  if (!m["id"].is_string() || m["id"].get<std::string>().empty()) fail("id", "expected the app's id, a string");
  const Json& e = m["entry"];
  static const std::regex entry_re("^[a-z_][A-Za-z0-9_]*(\\.[a-z_][A-Za-z0-9_]*)*:[A-Z][A-Za-z0-9_]*$");
  if (!e.is_string() || !std::regex_match(e.get<std::string>(), entry_re))
    fail("entry", "expected 'package.module:ClassName' (e.g. 'deployment:DemoApp'), got " + e.dump());
  return e.get<std::string>();
}

RayServeImport import_bioengine_app(const std::string& app_dir, const std::string& manifest_text, const Json& source,
                                    const RayServeImportOptions& opts) {
  const std::string manifest_file = app_dir + "/manifest.yaml";
  const std::string entry = bioengine_manifest_entry(manifest_text, manifest_file);
  const YamlDocument manifest = read_yaml(manifest_text, manifest_file);
  const std::string id = manifest.value["id"].get<std::string>();
  if (source.contains("error")) {
    const Json& e = source["error"];
    const std::string file = e.value("file", std::string());
    const int line = e.value("line", 0);
    throw ScenarioError(app_dir + "/" + file, line > 0 ? "line " + std::to_string(line) : "(file)",
                        e.value("message", std::string("cannot read the app's source")));
  }
  if (!source.contains("deployments") || !source["deployments"].is_array() || source["deployments"].empty())
    throw ScenarioError(app_dir, "(source)", "no deployment found from the entry " + entry);

  YamlDocument doc;
  std::vector<std::string> notes, not_read;
  Json deployments = Json::array();
  std::vector<std::pair<std::size_t, Json>> gpu_memory;  // deployment index -> gpu_memory_mb
  const Json& ds = source["deployments"];
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const Json& r = ds[i];
    const std::string label = r.value("file", std::string()) + ":" + r.value("class", std::string());
    const std::string path = "applications[0].deployments[" + std::to_string(i) + "]";
    doc.labels[path] = label;
    doc.lines[path] = r.value("line", 0);
    auto fail = [&](const std::string& key, const std::string& problem) {
      const Json& lines = r["lines"];
      const std::string at = key.empty() ? "" : "." + key;
      const int line = !key.empty() && lines.contains(key) ? lines[key].get<int>() : r.value("line", 0);
      throw ScenarioError(app_dir + "/" + r.value("file", std::string()),
                          r.value("class", std::string()) + at + " (line " + std::to_string(line) + ")", problem);
    };
    if (r["decorator"].is_null())
      fail("", "expected a @bioengine.app class (the manifest's entry, and each class its __init__ type hints name)");
    for (const auto& n : r["not_read"])
      not_read.push_back(label + "." + n.value("name", std::string()) + " (line " +
                         std::to_string(n.value("line", 0)) + ") = " + n.value("text", std::string()));
    const Json& kw = r["kwargs"];
    for (auto it = r["lines"].begin(); it != r["lines"].end(); ++it) doc.lines[path + "." + it.key()] = it.value();
    Json d = Json::object();
    d["name"] = r["class"];
    for (auto it = kw.begin(); it != kw.end(); ++it)
      if (!decorator_keywords().count(it.key())) d[it.key()] = it.value();
    // The decorator's default is 10 (decorators.py:205), not Ray's 5.
    d["max_ongoing_requests"] = kw.contains("max_ongoing_requests") ? kw["max_ongoing_requests"] : Json(10);
    // _build_ray_actor_options (decorators.py:423-459@03b490c).
    Json rao = Json::object();
    rao["num_cpus"] = kw.contains("num_cpus") ? kw["num_cpus"] : Json(1);
    doc.labels[path + ".ray_actor_options.num_cpus"] = label + ".num_cpus";
    if (kw.contains("num_cpus")) doc.lines[path + ".ray_actor_options.num_cpus"] = r["lines"]["num_cpus"];
    if (kw.contains("memory_mb") && !kw["memory_mb"].is_null()) {
      const Json& mb = kw["memory_mb"];
      if (!mb.is_number_integer() || mb.get<std::int64_t>() < 0 ||
          mb.get<std::int64_t>() > limits::kMaxMemoryMb)
        fail("memory_mb", "expected a whole number of MB in [0, " + std::to_string(limits::kMaxMemoryMb) + "], got " +
                              mb.dump());
      rao["memory"] = mb.get<std::int64_t>() * kBytesPerMiB;
      doc.labels[path + ".ray_actor_options.memory"] = label + ".memory_mb";
      doc.lines[path + ".ray_actor_options.memory"] = r["lines"]["memory_mb"];
    }
    if (kw.contains("pip") && kw.contains("container_image") && !kw["container_image"].is_null())
      fail("container_image", "expected container_image or pip, not both (BioEngine refuses both since 9bc2ca1)");
    for (const char* k : {"pip", "env_vars", "container_image"})
      if (r["lines"].contains(k))
        notes.push_back(std::string("not modelled beyond its install time (cluster.latency.runtime_env_install): ") +
                        label + "." + k);
    if (kw.contains("ray_actor_options")) {
      if (!kw["ray_actor_options"].is_object()) fail("ray_actor_options", "expected a dict");
      deep_merge(rao, kw["ray_actor_options"]);
      doc.labels[path + ".ray_actor_options"] = label + ".ray_actor_options";
    }
    const bool has_gmb = kw.contains("gpu_memory_mb") && !kw["gpu_memory_mb"].is_null();
    if (kw.contains("num_gpus")) rao["num_gpus"] = kw["num_gpus"];
    if (rao.contains("num_gpus")) {
      // BioEngine 0.15.0 (fba5ffe) refuses num_gpus (decorators.py:245-252);
      // 0.11 to 0.14 passed it to Ray as it stood.
      if (has_gmb)
        fail("num_gpus", "expected gpu_memory_mb or num_gpus, not both (BioEngine 0.15.0 and later take only "
                         "gpu_memory_mb)");
      doc.labels[path + ".ray_actor_options.num_gpus"] = label + ".num_gpus";
      if (kw.contains("num_gpus")) doc.lines[path + ".ray_actor_options.num_gpus"] = r["lines"]["num_gpus"];
      notes.push_back("num_gpus: refused by BioEngine 0.15.0 and later (fba5ffe: \"GPUs are now sized by VRAM\"), read "
                      "as BioEngine 0.11-0.14 passed it to Ray (1: a whole GPU): " + label);
    }
    if (has_gmb) {
      // The decorator's check (decorators.py:254-263): an int > 0, or -1.
      const Json& g = kw["gpu_memory_mb"];
      if (!g.is_number_integer() || (g.get<std::int64_t>() <= 0 && g.get<std::int64_t>() != -1))
        fail("gpu_memory_mb", "expected a positive integer (VRAM in MB), -1 for a whole GPU, or None, got " + g.dump());
      gpu_memory.emplace_back(i, g);
    }
    d["ray_actor_options"] = rao;
    deployments.push_back(d);
  }
  doc.value = {{"applications", Json::array({{{"name", id}, {"import_path", entry}, {"deployments", deployments}}})}};
  doc.labels["applications[0]"] = "manifest.yaml";
  doc.labels["applications[0].deployments"] = "manifest.yaml: entry " + entry + " and the classes it composes";
  RayServeImport out = import_ray_serve_document(doc, app_dir, opts);
  Json& apps = out.scenario["apps"];
  for (const auto& [i, g] : gpu_memory) apps[i]["gpu_memory_mb"] = g;
  if (ds.size() > 1) {
    // The app's deployments are one application: the entry first (its
    // ingress), each calling the classes its __init__ type hints name, once
    // a request, after its own work (how often a method calls one is in the
    // code, not read). A hint back up the list (a cycle) is not a call.
    std::vector<std::string> classes;
    for (const auto& r : ds) classes.push_back(r.value("class", std::string()));
    Json application = {{"id", id}, {"deploy_at", "0s"}, {"deployments", Json::array()}};
    for (std::size_t i = 0; i < ds.size(); ++i) {
      Json d = {{"name", classes[i]}};
      for (auto it = apps[i].begin(); it != apps[i].end(); ++it)
        if (it.key() != "id" && it.key() != "deploy_at") d[it.key()] = it.value();
      Json calls = Json::array();
      for (const auto& c : ds[i]["calls"]) {
        const auto pos = std::find(classes.begin(), classes.end(), c.get<std::string>());
        if (pos != classes.end() && static_cast<std::size_t>(pos - classes.begin()) > i) calls.push_back(c);
        else
          out.notes.push_back("a type hint back up the composition (a cycle), not a call: " + classes[i] + " -> " +
                              c.get<std::string>());
      }
      if (!calls.empty()) d["calls"] = calls;
      application["deployments"].push_back(d);
    }
    apps = Json::array({application});
    std::vector<std::string> kept;
    for (auto& n : out.notes)
      if (n.rfind("an application of several deployments", 0) != 0) kept.push_back(n);
    kept.push_back("one application of " + std::to_string(ds.size()) + " deployments (" + id + ".CLASS), the entry " +
                   "its ingress; each request calls each composed class once, after its own work (docs/serving.md, "
                   "\"Applications of several deployments\")");
    out.notes = std::move(kept);
  }
  // The apps with gpu_memory_mb load again (the Serve import checked the rest).
  try {
    parse_scenario(out.scenario, app_dir);
  } catch (const ScenarioError& e) {
    throw ScenarioError(app_dir, e.path(), "vramsim cannot represent it: " + e.problem());
  }
  std::string name = app_dir;
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  if (auto slash = name.find_last_of('/'); slash != std::string::npos) name = name.substr(slash + 1);
  out.scenario["name"] = name;
  out.scenario["description"] =
      "Imported by vramsim import bioengine from " + app_dir + " (BioEngine app " + id + ", entry " + entry +
      ", format 0.6.0): " + std::to_string(ds.size()) + (ds.size() == 1 ? " deployment" : " deployments") +
      ", each an app deployed at 0 s through the control plane; decorator keywords left out take the decorator's "
      "and Ray's defaults. Traffic and service times are not part of an app: add serve.traffic to the app (its "
      "first deployment, the ingress, where it has several) and serve.service_time to each (docs/serving.md). "
      "Cluster: " +
      (opts.cluster_scenario ? "from " + opts.cluster_file : std::string("the import's default (docs/import.md)")) + ".";
  for (auto& n : notes) out.notes.push_back(n);
  if (!not_read.empty()) {
    std::string line = "not literals, not read (vramsim reads literal values only): ";
    for (std::size_t k = 0; k < not_read.size(); ++k) line += (k ? ", " : "") + not_read[k];
    out.notes.push_back(line);
  }
  return out;
}

}  // namespace vramsim
