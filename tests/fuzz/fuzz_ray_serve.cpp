// The Ray Serve config fuzz target: bytes -> YAML reader -> import (and the
// BioEngine manifest checks) -> the
// scenario loader -> export -> import again. Any input must end in a
// ScenarioError or a scenario whose export imports back to the same apps;
// anything else (another exception, a sanitizer report, a signal, a
// round trip that differs) is a crash. Built as a libFuzzer target
// (VRAMSIM_FUZZ, tools/fuzz.sh ray-serve) and linked into the replay driver
// that CTest runs over the bundled configs and tests/fuzz/ray-serve.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include "scenario/bioengine_app.hpp"
#include "scenario/ray_serve_config.hpp"

namespace {

using namespace vramsim;

constexpr std::size_t kMaxInputBytes = 64 * 1024;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxInputBytes) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  // The same bytes as a BioEngine manifest: an entry or a ScenarioError.
  try {
    bioengine_manifest_entry(text, "manifest.yaml");
  } catch (const ScenarioError&) {
  }
  RayServeImport first;
  try {
    first = import_ray_serve_config(text, "fuzz.yaml", {});
  } catch (const ScenarioError&) {
    return 0;  // refused with a message: the expected outcome for bad input
  }
  const Scenario s = parse_scenario(first.scenario, "fuzz.json");  // the import checked it loads
  const RayServeExport exported = export_ray_serve_config(s);
  const RayServeImport second = import_ray_serve_config(exported.yaml, "exported.yaml", {});
  if (first.scenario["apps"] != second.scenario["apps"]) {
    std::cerr << "round trip differs:\n" << first.scenario["apps"].dump(1) << "\n" << second.scenario["apps"].dump(1)
              << "\n";
    std::abort();
  }
  return 0;
}
