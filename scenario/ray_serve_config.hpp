#pragma once
// Ray Serve config files (what `serve deploy config.yaml` takes, Ray's
// ServeDeploySchema) in and out of the scenario format: each deployment of
// each application becomes one app, with Ray's defaults where the file is
// silent. docs/import.md lists every field, what it becomes, and the Ray
// source each rule comes from.
#include <string>
#include <vector>

#include "scenario/scenario.hpp"

namespace vramsim {

struct RayServeImportOptions {
  // The scenario whose `cluster` the imported one keeps; none: the default
  // cluster of docs/import.md.
  const Json* cluster_scenario = nullptr;
  std::string cluster_file;  // for the description
  // Read the names Ray removed in July 2024 (max_concurrent_queries,
  // target_num_ongoing_requests_per_replica) as Ray did before, the new name
  // winning where both are set; without it they are ignored, as Ray ignores
  // them now.
  bool legacy_names = false;
};

struct RayServeImport {
  Json scenario;  // a scenario document (parse_scenario accepts it)
  // One line each: a field read but not modelled, a value Ray would take
  // from the deployment's code, a rewrite made (old names, target_capacity).
  std::vector<std::string> notes;
};

// Throws ScenarioError(file, YAML path (line N), reason) for bad YAML or a
// field Ray would refuse, or one vramsim cannot represent.
RayServeImport import_ray_serve_config(const std::string& yaml_text, const std::string& file,
                                       const RayServeImportOptions& opts);

struct YamlDocument;
// The same over a document already read (import_bioengine_app builds one
// from an app's source, with labels naming its files and classes).
RayServeImport import_ray_serve_document(const YamlDocument& doc, const std::string& file,
                                         const RayServeImportOptions& opts);

struct RayServeExport {
  std::string yaml;  // a Serve config file
  // The scenario's parts a Serve config has no place for (traffic, service
  // times, the cluster, ...), one line each.
  std::vector<std::string> notes;
};

// The scenario's apps as a Serve config. Apps imported from one keep their
// application, deployment and import path (`apps[].ray_serve`); the others
// become one application each, named by the app id, with a placeholder
// import path (noted).
RayServeExport export_ray_serve_config(const Scenario& s);

}  // namespace vramsim
