// vramsim import bioengine: the manifest checked as BioEngine checks it
// (artifact_utils.py:284-350 at aicell-lab/bioengine 03b490c) and the
// @bioengine.app keywords turned into Ray Serve options as the decorator
// turns them (decorators.py:196-473 at 03b490c). The source reader
// (tools/bioengine_app.py) is run on the test app by the CLI test
// import.bioengine-model-runner; here its output is given by hand.
#include <gtest/gtest.h>

#include "scenario/bioengine_app.hpp"

using namespace vramsim;

namespace {

const std::string kManifest =
    "name: T\nid: t-app\nid_emoji: x\ndescription: d\ntype: ray-serve\nformat_version: 0.6.0\nentry: main:Main\n";

// One decorated class, the given keywords (and their lines from 10 on).
Json source(const Json& kwargs, const Json& not_read = Json::array()) {
  Json lines = Json::object();
  int l = 10;
  for (auto it = kwargs.begin(); it != kwargs.end(); ++it) lines[it.key()] = l++;
  return {{"deployments", Json::array({{{"module", "main"}, {"class", "Main"}, {"file", "main.py"}, {"line", 9},
                                        {"decorator", "bioengine.app"}, {"kwargs", kwargs}, {"lines", lines},
                                        {"not_read", not_read}, {"calls", Json::array()}}})}};
}

RayServeImport import(const Json& src) { return import_bioengine_app("apps/t", kManifest, src, {}); }

ScenarioError import_error(const Json& src, const std::string& manifest = kManifest) {
  try {
    import_bioengine_app("apps/t", manifest, src, {});
  } catch (const ScenarioError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << src.dump();
  return ScenarioError("", "", "");
}

bool noted(const RayServeImport& r, const std::string& what) {
  for (const auto& n : r.notes)
    if (n.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

// The decorator's defaults: num_cpus 1, max_ongoing_requests 10 (not
// Ray's 5), no memory, no GPU; one deployment is the app, named by the id.
TEST(BioEngineImport, TheDecoratorsDefaultsApply) {
  const auto r = import(source(Json::object()));
  const Json& a = r.scenario["apps"][0];
  EXPECT_EQ(a["id"], "t-app");
  EXPECT_EQ(a["ray_serve"]["deployment"], "Main");
  EXPECT_EQ(a["ray_serve"]["import_path"], "main:Main");
  EXPECT_EQ(a["cpus"], 1);
  EXPECT_EQ(a["memory_mb"], 0);
  EXPECT_EQ(a["serve"]["max_ongoing_requests"], 10);
  EXPECT_EQ(a["replicas"], 1);
  EXPECT_FALSE(a.contains("gpu_memory_mb"));
  EXPECT_EQ(r.scenario["name"], "t");
}

// memory_mb is MiB (memory = memory_mb * 1024 * 1024); gpu_memory_mb is
// the app's, sized by the control plane as BioEngine's builder sizes it;
// the other keywords pass to serve.deployment.
TEST(BioEngineImport, KeywordsBecomeTheAppsSizeAndServeOptions) {
  const auto r = import(source({{"num_cpus", 2}, {"memory_mb", 12288}, {"gpu_memory_mb", 8000},
                                {"max_queued_requests", 30},
                                {"autoscaling_config", {{"min_replicas", 0}, {"max_replicas", 3}}}}));
  const Json& a = r.scenario["apps"][0];
  EXPECT_EQ(a["cpus"], 2);
  EXPECT_EQ(a["memory_mb"], 12288);
  EXPECT_EQ(a["gpu_memory_mb"], 8000);
  EXPECT_EQ(a["serve"]["max_queued_requests"], 30);
  EXPECT_EQ(a["serve"]["autoscaling_config"]["max_replicas"], 3);
  EXPECT_FALSE(a.contains("replicas"));
  EXPECT_EQ(import(source({{"gpu_memory_mb", -1}})).scenario["apps"][0]["gpu_memory_mb"], -1);
  // ray_actor_options merges last (_deep_merge): its num_cpus wins.
  EXPECT_EQ(import(source({{"num_cpus", 2}, {"ray_actor_options", {{"num_cpus", 3}}}})).scenario["apps"][0]["cpus"], 3);
}

// num_gpus: BioEngine 0.15.0 (fba5ffe) refuses it; 0.11-0.14 passed it to
// Ray. Read as those did, and said so; never beside gpu_memory_mb.
TEST(BioEngineImport, NumGpusIsReadAsOlderDecoratorsPassedIt) {
  auto r = import(source({{"num_gpus", 1}}));
  EXPECT_EQ(r.scenario["apps"][0]["gpu_memory_mb"], -1);
  EXPECT_TRUE(noted(r, "fba5ffe"));
  r = import(source({{"num_gpus", 0}}));
  EXPECT_FALSE(r.scenario["apps"][0].contains("gpu_memory_mb"));
  const auto e = import_error(source({{"num_gpus", 1}, {"gpu_memory_mb", 8000}}));
  EXPECT_EQ(e.file(), "apps/t/main.py");
  EXPECT_NE(e.path().find("Main.num_gpus (line 10)"), std::string::npos) << e.what();
}

TEST(BioEngineImport, WhatTheDecoratorRefusesIsRefused) {
  struct Case {
    Json kwargs;
    std::string where, says;
  };
  const std::vector<Case> cases = {
      {{{"gpu_memory_mb", 0}}, "Main.gpu_memory_mb (line 10)", "-1 for a whole GPU"},
      {{{"gpu_memory_mb", true}}, "Main.gpu_memory_mb", "positive integer"},
      {{{"gpu_memory_mb", 2.5}}, "Main.gpu_memory_mb", "positive integer"},
      {{{"container_image", "img"}, {"pip", Json::array({"x"})}}, "Main.container_image", "not both"},
      {{{"memory_mb", -1}}, "Main.memory_mb", "whole number of MB"},
      {{{"max_queued_requests", 0}}, "main.py:Main.max_queued_requests (line 10)", "-1 (no limit)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.kwargs.dump());
    const auto e = import_error(source(c.kwargs));
    EXPECT_NE(e.path().find(c.where), std::string::npos) << e.what();
    EXPECT_NE(e.problem().find(c.says), std::string::npos) << e.what();
  }
}

// What the source reader could not read (not a literal) is named, in one line.
TEST(BioEngineImport, NonLiteralsAreNamedInOneLine) {
  const auto r = import(source({{"num_cpus", 1}}, Json::array({{{"name", "pip"}, {"line", 12}, {"text", "_read('r.txt')"}},
                                                               {{"name", "memory_mb"}, {"line", 13}, {"text", "MB"}}})));
  int lines = 0;
  for (const auto& n : r.notes)
    if (n.find("not literals, not read") != std::string::npos) {
      ++lines;
      EXPECT_NE(n.find("main.py:Main.pip (line 12) = _read('r.txt')"), std::string::npos) << n;
      EXPECT_NE(n.find("main.py:Main.memory_mb (line 13) = MB"), std::string::npos) << n;
    }
  EXPECT_EQ(lines, 1);
}

// The manifest as BioEngine's validate_manifest checks it.
TEST(BioEngineImport, TheManifestIsCheckedAsBioEngineChecksIt) {
  struct Case {
    std::string manifest, where, says;
  };
  const std::string base = "name: T\nid: t-app\nid_emoji: x\ndescription: d\ntype: ray-serve\n";
  const std::vector<Case> cases = {
      {base + "format_version: 0.5.0\ndeployments: [main:Main]\n", "format_version", "format 0.5.0 is not read"},
      {base + "entry: main:Main\n", "format_version", "expected format_version 0.6.0"},
      {base + "format_version: 0.7.0\nentry: main:Main\n", "format_version", "got 0.7.0"},
      {base + "format_version: 0.6.0\nentry: main:lowercase\n", "entry", "package.module:ClassName"},
      {base + "format_version: 0.6.0\n", "entry", "BioEngine requires it"},
      {"name: T\nid: t\nid_emoji: x\ndescription: d\ntype: model\nformat_version: 0.6.0\nentry: m:M\n", "type",
       "ray-serve"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.manifest);
    const auto e = import_error(source(Json::object()), c.manifest);
    EXPECT_EQ(e.file(), "apps/t/manifest.yaml");
    EXPECT_NE(e.path().find(c.where), std::string::npos) << e.what();
    EXPECT_NE(e.problem().find(c.says), std::string::npos) << e.what();
  }
}

// A source the reader could not read comes back as an error naming the file and line.
TEST(BioEngineImport, ASourceErrorNamesItsFileAndLine) {
  const auto e = import_error({{"error", {{"file", "main.py"}, {"line", 7}, {"message", "invalid Python: x"}}}});
  EXPECT_EQ(e.file(), "apps/t/main.py");
  EXPECT_EQ(e.path(), "line 7");
  EXPECT_EQ(e.problem(), "invalid Python: x");
}
