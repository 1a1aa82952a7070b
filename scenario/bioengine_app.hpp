#pragma once
// BioEngine apps in the scenario format: an app folder's manifest.yaml
// (format 0.6.0, BioEngine 0.11 and later) and the keyword arguments of the
// @bioengine.app decorators its entry class composes, each deployment an
// app as a Ray Serve config's would be (scenario/ray_serve_config.hpp).
// Reading the Python source is tools/bioengine_app.py's (Python's ast);
// this maps what it found. docs/import.md, "BioEngine apps".
#include <string>

#include "scenario/ray_serve_config.hpp"

namespace vramsim {

// The manifest's entry ("module:Class") after BioEngine's own checks of
// the manifest (validate_manifest, bioengine/utils/artifact_utils.py:284-350
// at 03b490c); throws ScenarioError(manifest_file, field, reason).
std::string bioengine_manifest_entry(const std::string& manifest_text, const std::string& manifest_file);

// `source`: what tools/bioengine_app.py printed for the entry. `app_dir`
// names the app in messages and the description.
RayServeImport import_bioengine_app(const std::string& app_dir, const std::string& manifest_text, const Json& source,
                                    const RayServeImportOptions& opts);

}  // namespace vramsim
