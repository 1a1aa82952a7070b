// vramsim import/export ray-serve: Ray Serve config files read as Ray reads
// them (python/ray/serve/schema.py and config.py at 5866967ffd: defaults,
// what it refuses, what it ignores), Ray's documented examples imported,
// run and round-tripped, and bad input refused naming the YAML path.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runner/simulation.hpp"
#include "scenario/ray_serve_config.hpp"
#include "scenario/yaml_document.hpp"
#include "tests/support/test_paths.hpp"

using namespace vramsim;

namespace {

std::string example(const std::string& name) {
  const std::string path = std::string(vramsim_test_source_dir()) + "/examples/ray-serve/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

RayServeImport import(const std::string& yaml, RayServeImportOptions opts = {}) {
  return import_ray_serve_config(yaml, "serve.yaml", opts);
}

ScenarioError import_error(const std::string& yaml) {
  try {
    import(yaml);
  } catch (const ScenarioError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for\n" << yaml;
  return ScenarioError("", "", "");
}

// One application, one deployment, the deployment's own lines indented.
std::string one(const std::string& deployment_lines, const std::string& top = "") {
  return top + "applications:\n- name: a\n  import_path: m:app\n  deployments:\n  - name: D\n" + deployment_lines;
}

const Json& app0(const RayServeImport& r) { return r.scenario["apps"][0]; }

bool noted(const RayServeImport& r, const std::string& what, const std::string& where) {
  for (const auto& n : r.notes)
    if (n.find(what) != std::string::npos && n.find(where) != std::string::npos) return true;
  return false;
}

// The scenario without its name and description (which name the file).
Json body(Json s) {
  s.erase("name");
  s.erase("description");
  return s;
}

}  // namespace

// Ray's defaults where the file is silent: num_replicas 1, max_ongoing_requests
// 5 (DEFAULT_MAX_ONGOING_REQUESTS), max_queued_requests -1, num_cpus 1
// (ReplicaConfig), no memory, no GPU; the application is "default".
TEST(RayServeImport, AbsentFieldsTakeRaysDefaults) {
  const auto r = import("applications:\n- import_path: m:app\n  deployments:\n  - name: D\n");
  const Json& a = app0(r);
  EXPECT_EQ(a["id"], "default");
  EXPECT_EQ(a["ray_serve"]["application"], "default");
  EXPECT_EQ(a["ray_serve"]["deployment"], "D");
  EXPECT_EQ(a["ray_serve"]["import_path"], "m:app");
  EXPECT_EQ(a["replicas"], 1);
  EXPECT_EQ(a["cpus"], 1.0);
  EXPECT_EQ(a["memory_mb"], 0);
  EXPECT_FALSE(a.contains("gpu_memory_mb"));
  EXPECT_FALSE(a.contains("num_gpus"));
  EXPECT_EQ(a["serve"]["max_ongoing_requests"], 5);
  EXPECT_EQ(a["serve"]["max_queued_requests"], -1);
  EXPECT_FALSE(a["serve"].contains("autoscaling_config"));
  // The imported scenario loads: one app, deployed at 0 s.
  const Scenario s = parse_scenario(r.scenario, "out.json");
  ASSERT_EQ(s.apps.size(), 1u);
  ASSERT_EQ(s.actions.size(), 1u);
  EXPECT_EQ(s.actions[0].kind, ActionKind::Deploy);
  EXPECT_EQ(s.actions[0].at, 0);
}

// num_replicas "auto": AutoscalingConfig.default() (min 1, max 100, target
// 2; config.py:687-693) under the given fields; an autoscaling_config
// without "auto" starts from the model's own defaults (max 1).
TEST(RayServeImport, AutoReplicasStartFromRaysAutoDefaults) {
  auto c = app0(import(one("    num_replicas: auto\n")))["serve"]["autoscaling_config"];
  EXPECT_EQ(c["min_replicas"], 1);
  EXPECT_EQ(c["max_replicas"], 100);
  EXPECT_EQ(c["target_ongoing_requests"], 2.0);
  EXPECT_EQ(c["upscale_delay_s"], 30.0);
  EXPECT_EQ(c["downscale_delay_s"], 600.0);
  EXPECT_FALSE(c.contains("initial_replicas"));
  c = app0(import(one("    num_replicas: auto\n    autoscaling_config: {max_replicas: 7}\n")))["serve"]["autoscaling_config"];
  EXPECT_EQ(c["max_replicas"], 7);
  EXPECT_EQ(c["min_replicas"], 1);
  c = app0(import(one("    autoscaling_config: {min_replicas: 0}\n")))["serve"]["autoscaling_config"];
  EXPECT_EQ(c["min_replicas"], 0);
  EXPECT_EQ(c["max_replicas"], 1);
  EXPECT_FALSE(app0(import(one("    num_replicas: auto\n"))).contains("replicas"));
}

// The effective factors (config.py:695-705): upscaling_factor, else
// upscale_smoothing_factor, else smoothing_factor; the same downwards.
TEST(RayServeImport, OldSmoothingFactorsActAsRaysEffectiveFactors) {
  auto c = app0(import(one("    autoscaling_config: {upscale_smoothing_factor: 0.5, downscale_smoothing_factor: 0.25,"
                           " smoothing_factor: 3}\n")))["serve"]["autoscaling_config"];
  EXPECT_EQ(c["upscaling_factor"], 0.5);
  EXPECT_EQ(c["downscaling_factor"], 0.25);
  EXPECT_EQ(c["smoothing_factor"], 3.0);
  c = app0(import(one("    autoscaling_config: {upscaling_factor: 2, upscale_smoothing_factor: 0.5}\n")))["serve"]
                 ["autoscaling_config"];
  EXPECT_EQ(c["upscaling_factor"], 2.0);
  EXPECT_FALSE(c.contains("downscaling_factor"));
  const Scenario s = parse_scenario(import(one("    autoscaling_config: {upscale_smoothing_factor: 0.5}\n")).scenario, "x");
  EXPECT_EQ(s.apps[0].serve->autoscaling->upscaling(), 0.5);
  EXPECT_EQ(s.apps[0].serve->autoscaling->downscaling(), 1.0);
}

// Ray removed max_concurrent_queries and target_num_ongoing_requests_per_replica
// (b610a0be0e, 16b024323e): ignored, and said so; --legacy-names reads them
// as Ray did before, the new name winning where both are given.
TEST(RayServeImport, RemovedNamesAreIgnoredUnlessAskedForAsRayOnceReadThem) {
  const std::string old = one("    max_concurrent_queries: 9\n    autoscaling_config: "
                              "{target_num_ongoing_requests_per_replica: 4}\n");
  auto r = import(old);
  EXPECT_EQ(app0(r)["serve"]["max_ongoing_requests"], 5);
  EXPECT_EQ(app0(r)["serve"]["autoscaling_config"]["target_ongoing_requests"], 2.0);
  EXPECT_TRUE(noted(r, "b610a0be0e", "deployments[0].max_concurrent_queries (line 6)")) << r.notes.size();
  EXPECT_TRUE(noted(r, "16b024323e", "target_num_ongoing_requests_per_replica"));
  RayServeImportOptions legacy;
  legacy.legacy_names = true;
  r = import(old, legacy);
  EXPECT_EQ(app0(r)["serve"]["max_ongoing_requests"], 9);
  EXPECT_EQ(app0(r)["serve"]["autoscaling_config"]["target_ongoing_requests"], 4.0);
  r = import(one("    max_concurrent_queries: 9\n    max_ongoing_requests: 3\n"), legacy);
  EXPECT_EQ(app0(r)["serve"]["max_ongoing_requests"], 3);
}

// GPUs: num_gpus 1 is a whole GPU (gpu_memory_mb -1); a share is kept as
// Ray's request; VRAM_MB beside num_gpus 0.01 is what BioEngine's VRAM
// branch asks for, so it reads as gpu_memory_mb. memory is bytes.
TEST(RayServeImport, ActorOptionsBecomeTheAppsSize) {
  auto a = app0(import(one("    ray_actor_options: {num_cpus: 2.5, num_gpus: 1, memory: 1073741824}\n")));
  EXPECT_EQ(a["cpus"], 2.5);
  EXPECT_EQ(a["gpu_memory_mb"], -1);
  EXPECT_EQ(a["memory_mb"], 1024);
  a = app0(import(one("    ray_actor_options: {num_gpus: 0.25}\n")));
  EXPECT_EQ(a["num_gpus"], 0.25);
  EXPECT_FALSE(a.contains("gpu_memory_mb"));
  a = app0(import(one("    ray_actor_options: {num_gpus: 0.01, resources: {VRAM_MB: 8000}}\n")));
  EXPECT_EQ(a["gpu_memory_mb"], 8000);
  EXPECT_FALSE(a.contains("num_gpus"));
  const auto r = import(one("    ray_actor_options: {memory: 1000, resources: {custom_thing: 2}}\n"));
  EXPECT_EQ(app0(r)["memory_mb"], 1);  // 1000 bytes: one MiB, rounded up
  EXPECT_TRUE(noted(r, "rounded up", "ray_actor_options.memory"));
  EXPECT_TRUE(noted(r, "custom resource", "resources.custom_thing"));
}

// target_capacity scales every replica count as get_capacity_adjusted_num_replicas
// does (_private/utils.py:623-646): half up, at least 1 unless the count is 0.
TEST(RayServeImport, TargetCapacityScalesReplicaCountsHalfUp) {
  const std::string yaml =
      "target_capacity: 50\napplications:\n- name: a\n  import_path: m:app\n  deployments:\n"
      "  - name: Three\n    num_replicas: 3\n  - name: One\n    num_replicas: 1\n"
      "  - name: Auto\n    autoscaling_config: {min_replicas: 0, max_replicas: 5, initial_replicas: 4}\n";
  const auto r = import(yaml);
  const Json& apps = r.scenario["apps"];
  EXPECT_EQ(apps[0]["replicas"], 2);  // 1.5 -> 2
  EXPECT_EQ(apps[1]["replicas"], 1);  // 0.5 -> 1
  const Json& c = apps[2]["serve"]["autoscaling_config"];
  EXPECT_EQ(c["min_replicas"], 0);
  EXPECT_EQ(c["max_replicas"], 3);      // 2.5 -> 3
  EXPECT_EQ(c["initial_replicas"], 2);  // 2
}

// Several deployments: one app each, application.deployment, and a note
// that the calls between them are not modelled.
TEST(RayServeImport, EachDeploymentOfAnApplicationIsAnApp) {
  const auto r = import(example("text-ml.yaml"));
  const Json& apps = r.scenario["apps"];
  ASSERT_EQ(apps.size(), 2u);
  EXPECT_EQ(apps[0]["id"], "default.Translator");
  EXPECT_EQ(apps[1]["id"], "default.Summarizer");
  EXPECT_EQ(apps[0]["replicas"], 1);
  EXPECT_TRUE(noted(r, "calls from one deployment to another are not modelled", "applications[0].deployments"));
  // What it does not model is listed, once per kind.
  EXPECT_TRUE(noted(r, "read, not modelled", "proxy_location (line 1)"));
  EXPECT_TRUE(noted(r, "read, not modelled", "applications[0].deployments[0].user_config (line 19)"));
  EXPECT_TRUE(noted(r, "install time", "applications[0].runtime_env (line 12)"));
  int read_lines = 0;
  for (const auto& n : r.notes) read_lines += n.rfind("read, not modelled:", 0) == 0;
  EXPECT_EQ(read_lines, 1);
}

TEST(RayServeImport, UnknownFieldsAreListedAsRayIgnoresThem) {
  const auto r = import(one("    frobnicate: 3\n    ray_actor_options: {num_cpus: 1, warp: 9}\n", "colour: blue\n"));
  EXPECT_TRUE(noted(r, "ignored, as Ray ignores fields it does not know", "colour (line 1)"));
  EXPECT_TRUE(noted(r, "ignored, as Ray ignores fields it does not know", "deployments[0].frobnicate (line 7)"));
  EXPECT_TRUE(noted(r, "ignored, as Ray ignores fields it does not know", "ray_actor_options.warp"));
}

// Ray's documented examples: import, load, run and round-trip.
TEST(RayServeImport, RaysDocumentedExamplesImportRunAndRoundTrip) {
  for (const char* name : {"video-analysis.yaml", "text-ml.yaml", "application-level-autoscaling-with-defaults.yaml",
                           "async-inference-autoscaling.yaml"}) {
    SCOPED_TRACE(name);
    const auto first = import_ray_serve_config(example(name), name, {});
    const Scenario s = parse_scenario(first.scenario, name);
    const auto exported = export_ray_serve_config(s);
    const auto second = import_ray_serve_config(exported.yaml, "exported.yaml", {});
    EXPECT_EQ(body(first.scenario).dump(), body(second.scenario).dump()) << exported.yaml;
    const RunResult run = run_scenario(s, RunOptions{});
    EXPECT_EQ(run.metrics.apps_running, static_cast<int>(s.apps.size()));
  }
}

// The video-analysis config, by Ray's reading: three "auto" deployments
// with the autoscaling the file gives, the encoder on a whole GPU.
TEST(RayServeImport, VideoAnalysisReadsAsRayReadsIt) {
  const auto r = import(example("video-analysis.yaml"));
  const Json& apps = r.scenario["apps"];
  ASSERT_EQ(apps.size(), 3u);
  EXPECT_EQ(apps[0]["id"], "app1.VideoEncoder");
  EXPECT_EQ(apps[0]["cpus"], 2.0);
  EXPECT_EQ(apps[0]["gpu_memory_mb"], -1);
  EXPECT_EQ(apps[0]["serve"]["max_ongoing_requests"], 2);
  EXPECT_EQ(apps[0]["serve"]["autoscaling_config"]["max_replicas"], 32);
  EXPECT_EQ(apps[2]["id"], "app1.VideoAnalyzer");
  EXPECT_EQ(apps[2]["cpus"], 6.0);
  EXPECT_EQ(apps[2]["serve"]["autoscaling_config"]["max_replicas"], 64);
  EXPECT_FALSE(apps[1].contains("gpu_memory_mb"));
  // Its metrics_interval_s is Ray's default (10): no deprecation note.
  for (const auto& n : r.notes) EXPECT_EQ(n.find("deprecated"), std::string::npos) << n;
}

// What Ray refuses is refused, naming the YAML path and its line.
TEST(RayServeImport, WhatRayRefusesIsRefusedNamingThePath) {
  struct Case {
    std::string yaml, where, says;
  };
  const std::vector<Case> cases = {
      {one("    num_replicas: 0\n"), "applications[0].deployments[0].num_replicas", "positive integer or \"auto\""},
      {one("    num_replicas: 2.0\n"), "deployments[0].num_replicas", "got 2.0"},
      {one("    num_replicas: AUTO\n"), "deployments[0].num_replicas", "got \"AUTO\""},
      {one("    num_replicas: 2\n    autoscaling_config: {max_replicas: 3}\n"), "deployments[0].num_replicas",
       "Manually setting num_replicas is not allowed"},
      {one("    max_queued_requests: 0\n"), "deployments[0].max_queued_requests (line 6)", "-1 (no limit)"},
      {one("    max_ongoing_requests: 0\n"), "deployments[0].max_ongoing_requests", "expected an integer in [1"},
      {one("    autoscaling_config: {min_replicas: 3, max_replicas: 2}\n"), "autoscaling_config.max_replicas",
       "max_replicas >= min_replicas"},
      {one("    autoscaling_config: {min_replicas: 1, max_replicas: 2, initial_replicas: 5}\n"),
       "autoscaling_config.initial_replicas", "[1, 2]"},
      {one("    autoscaling_config: {aggregation_function: median}\n"), "aggregation_function", "mean, max or min"},
      {one("    ray_actor_options: {resources: {GPU: 1}}\n"), "resources.GPU", "num_cpus / num_gpus"},
      {one("    ray_actor_options: {num_gpus: 1.5}\n"), "ray_actor_options.num_gpus", "fraction above 1"},
      {one("    ray_actor_options: {num_gpus: 0.5, resources: {VRAM_MB: 8000}}\n"), "ray_actor_options.num_gpus",
       "num_gpus 0.01"},
      {one("    ray_actor_options: {num_cpus: -1}\n"), "ray_actor_options.num_cpus", ">= 0"},
      {one("    ray_actor_options: {num_cpus: yes}\n"), "ray_actor_options.num_cpus", "got a boolean"},
      {one("    logging_config: {encoding: TEXT, colour: red}\n"), "logging_config.colour", "refuses unknown fields"},
      {one("  - name: D\n"), "deployments[1].name", "listed twice"},
      {"applications:\n- name: a\n  import_path: m:app\n  host: 0.0.0.0\n  deployments: [{name: D}]\n",
       "applications[0].host (line 4)", "top level deploy config only"},
      {"applications:\n- name: a\n  deployments: [{name: D}]\n", "applications[0].import_path", "required"},
      {"applications:\n- name: a\n  import_path: a:b:c\n  deployments: [{name: D}]\n", "import_path",
       "at most one colon"},
      {"applications:\n- name: a\n  import_path: mod\n  deployments: [{name: D}]\n", "import_path", "dot or colon"},
      {"applications:\n- {name: a, import_path: m:app, deployments: [{name: D}]}\n"
       "- {name: a, import_path: m:app, deployments: [{name: E}]}\n",
       "applications[1].name (line 3)", "duplicate application name"},
      {"applications:\n- {name: a, route_prefix: /x, import_path: m:app, deployments: [{name: D}]}\n"
       "- {name: b, route_prefix: /x, import_path: m:app, deployments: [{name: E}]}\n",
       "applications[1].route_prefix", "duplicate route_prefix"},
      {"applications:\n- {name: a, import_path: m:app, external_scaler_enabled: true, deployments: "
       "[{name: D, num_replicas: auto}]}\n",
       "external_scaler_enabled", "autoscaling deployment"},
      {"applications:\n- name: a\n  import_path: m:app\n", "applications[0].deployments", "list each deployment"},
      {"proxy_location: Everywhere\napplications: []\n", "proxy_location (line 1)", "EveryNode"},
      {"target_capacity: 120\napplications: []\n", "target_capacity", "<= 100"},
      {"http_options: {port: 8000}\n", "applications", "required"},
      {"- just\n- a list\n", "(top level)", "expected a mapping, got a list"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.yaml);
    const ScenarioError e = import_error(c.yaml);
    EXPECT_EQ(e.file(), "serve.yaml");
    EXPECT_NE(e.path().find(c.where), std::string::npos) << e.what();
    EXPECT_NE(e.problem().find(c.says), std::string::npos) << e.what();
  }
}

// Bad YAML: the parser's reason with its line and column; a duplicate key
// (which YAML would overwrite) names its path.
TEST(RayServeImport, BadYamlNamesItsLine) {
  ScenarioError e = import_error("applications:\n  - name: a\n   import_path: [oops\n");
  EXPECT_EQ(e.path().rfind("line ", 0), 0u) << e.what();
  EXPECT_NE(e.problem().find("invalid YAML"), std::string::npos) << e.what();
  e = import_error(one("    num_replicas: 1\n    num_replicas: 2\n"));
  EXPECT_EQ(e.path(), "applications[0].deployments[0].num_replicas (line 7)") << e.what();
  EXPECT_NE(e.problem().find("duplicate key"), std::string::npos);
  e = import_error(std::string("applications: []\n\0", 18));
  EXPECT_EQ(e.path(), "line 2, column 1") << e.what();
  EXPECT_NE(e.problem().find("U+0000"), std::string::npos) << e.what();
  // PyYAML takes printable UTF-8 only: an invalid byte or a control
  // character is refused where it stands.
  e = import_error("applications:\n- name: My\xff\n");
  EXPECT_EQ(e.path(), "line 2, column 11") << e.what();
  EXPECT_NE(e.problem().find("not UTF-8 (byte 0xFF)"), std::string::npos) << e.what();
  e = import_error("applications:\n- name: \x04x\n");
  EXPECT_NE(e.problem().find("U+0004"), std::string::npos) << e.what();
  EXPECT_NO_THROW(read_yaml("name: caf\xc3\xa9 \xf0\x9f\x94\xac\n", "utf8.yaml"));
}

// What Ray takes but vramsim cannot hold is refused at the deployment.
TEST(RayServeImport, ValuesBeyondVramsimsRangesAreRefusedAtTheirDeployment) {
  const ScenarioError e = import_error(one("    autoscaling_config: {max_replicas: 200000}\n"));
  EXPECT_EQ(e.path(), "applications[0].deployments[0] (line 5)") << e.what();
  EXPECT_NE(e.problem().find("vramsim cannot represent it: $.apps[0].serve.autoscaling_config.max_replicas"),
            std::string::npos)
      << e.what();
}

// PyYAML's scalars: quoted numbers are strings, a float needs a dot and a
// signed exponent ("1e3" and "1.5e3" are strings, "1.5e+3" a float), yes/no
// are booleans, ~ is null.
TEST(RayServeImport, ScalarsResolveAsPyYamlResolvesThem) {
  const YamlDocument d = read_yaml("a: '5'\nb: 1e3\nc: 1.5e+3\nd: yes\ne: ~\nf: 1.5e3\ng: 1_000\n", "t.yaml");
  EXPECT_TRUE(d.value["a"].is_string());
  EXPECT_TRUE(d.value["b"].is_string());
  EXPECT_EQ(d.value["c"], 1500.0);
  EXPECT_EQ(d.value["d"], true);
  EXPECT_TRUE(d.value["e"].is_null());
  EXPECT_TRUE(d.value["f"].is_string());
  EXPECT_EQ(d.value["g"], 1000);
  EXPECT_EQ(d.lines.at("c"), 3);
  // Ray's pydantic then reads a string that spells a number as the number
  // (lax mode), except where the field is a StrictInt (max_queued_requests)
  // or num_replicas (an int or "auto").
  const auto r = import(one("    max_ongoing_requests: '7'\n    autoscaling_config: {target_ongoing_requests: 1e1}\n"));
  EXPECT_EQ(app0(r)["serve"]["max_ongoing_requests"], 7);
  EXPECT_EQ(app0(r)["serve"]["autoscaling_config"]["target_ongoing_requests"], 10.0);
  EXPECT_NE(import_error(one("    max_queued_requests: '7'\n")).problem().find("got a string"), std::string::npos);
  EXPECT_NE(import_error(one("    max_ongoing_requests: '7.5'\n")).problem().find("expected an integer"),
            std::string::npos);
}

// The cluster of --cluster is kept as it is.
TEST(RayServeImport, TheClusterOfAnotherScenarioIsKept) {
  const Json other = Json::parse(R"({"cluster": {"mode": "static", "max_workers": 2, "initial_workers": 2,
      "partition": [{"count": 2, "cpus": 8, "memory_gb": 256, "gpus": 1, "gpu": "A10"}]}})");
  RayServeImportOptions o;
  o.cluster_scenario = &other;
  o.cluster_file = "other.json";
  const auto r = import(one("    num_replicas: 2\n"), o);
  EXPECT_EQ(r.scenario["cluster"], other["cluster"]);
  EXPECT_NE(r.scenario["description"].get<std::string>().find("from other.json"), std::string::npos);
}

// A scenario not imported: each app is an application of its own, with a
// placeholder import path (said), and its vramsim-only parts are listed.
TEST(RayServeExport, AScenariosOwnAppsBecomeApplications) {
  const Scenario s = parse_scenario(Json::parse(R"({"apps": [
      {"id": "sd", "gpu_memory_mb": 16000, "cpus": 2, "memory_mb": 2048,
       "serve": {"max_ongoing_requests": 1, "service_time": "3s",
                 "autoscaling_config": {"min_replicas": 0, "max_replicas": 4, "initial_replicas": 1},
                 "traffic": {"rate_per_s": 1}}},
      {"id": "whole", "gpu_memory_mb": -1, "replicas": 3}]})"), "s.json");
  const auto ex = export_ray_serve_config(s);
  const YamlDocument d = read_yaml(ex.yaml, "out.yaml");
  const Json& apps = d.value["applications"];
  ASSERT_EQ(apps.size(), 2u);
  EXPECT_EQ(apps[0]["name"], "sd");
  EXPECT_EQ(apps[0]["import_path"], "sd:app");
  const Json& dep = apps[0]["deployments"][0];
  EXPECT_EQ(dep["name"], "sd");
  EXPECT_FALSE(dep.contains("num_replicas"));
  EXPECT_EQ(dep["autoscaling_config"]["min_replicas"], 0);
  EXPECT_EQ(dep["autoscaling_config"]["initial_replicas"], 1);
  EXPECT_EQ(dep["ray_actor_options"]["num_gpus"], 0.01);
  EXPECT_EQ(dep["ray_actor_options"]["resources"]["VRAM_MB"], 16000);
  EXPECT_EQ(dep["ray_actor_options"]["memory"], 2048LL * 1024 * 1024);
  EXPECT_EQ(apps[1]["deployments"][0]["num_replicas"], 3);
  EXPECT_EQ(apps[1]["deployments"][0]["ray_actor_options"]["num_gpus"], 1);
  bool placeholder = false, traffic = false;
  for (const auto& n : ex.notes) {
    placeholder = placeholder || n.find("sd:app is a placeholder") != std::string::npos;
    traffic = traffic || n.find("serve.traffic") != std::string::npos;
  }
  EXPECT_TRUE(placeholder);
  EXPECT_TRUE(traffic);
  // And back: the same sizes and serving options.
  const Scenario back = parse_scenario(import_ray_serve_config(ex.yaml, "out.yaml", {}).scenario, "back.json");
  ASSERT_EQ(back.apps.size(), 2u);
  EXPECT_EQ(back.apps[0].gpu_memory_mb, 16000);
  EXPECT_EQ(back.apps[0].cpus, 2);
  EXPECT_EQ(back.apps[0].memory_bytes, 2048LL * 1024 * 1024);
  EXPECT_EQ(back.apps[0].serve->autoscaling->max_replicas, 4);
  EXPECT_EQ(back.apps[1].replicas, 3);
  EXPECT_EQ(back.apps[1].gpu_memory_mb, -1);
}

// A share of a GPU stated as Ray's num_gpus books that share: three
// replicas of 0.5 on two one-GPU nodes hold 1.5 GPUs, two on one GPU.
TEST(RayServeImport, AStatedGpuShareBooksThatShare) {
  const Json cluster = Json::parse(R"({"cluster": {"mode": "static", "max_workers": 2, "initial_workers": 2,
      "partition": [{"count": 2, "cpus": 8, "memory_gb": 256, "gpus": 1, "gpu": "A10"}]}})");
  RayServeImportOptions o;
  o.cluster_scenario = &cluster;
  o.cluster_file = "c.json";
  Json s = import(one("    num_replicas: 3\n    ray_actor_options: {num_gpus: 0.5}\n"), o).scenario;
  s["actions"] = Json::parse(R"([{"at": "10m", "do": "status", "expect": {"cluster.used_gpu": 1.5}}])");
  const Scenario sc = parse_scenario(s, "shares.json");
  EXPECT_EQ(sc.apps[0].num_gpus, 0.5);
  const RunResult run = run_scenario(sc, RunOptions{});
  EXPECT_EQ(run.metrics.apps_running, 1);
  EXPECT_TRUE(run.all_held());
  for (const auto& e : run.expectations) EXPECT_TRUE(e.held) << e.description << ": " << e.why;
}
