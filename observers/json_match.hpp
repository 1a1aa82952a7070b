#pragma once
// How expectations compare what a run gave with what a scenario expects.
#include <string>

#include "engine/trace.hpp"

namespace vramsim {

// `want` is in `got`: numbers within 1e-9 (relative, at least absolute),
// objects by their keys (a subset), anything else equal.
bool json_matches(const Json& want, const Json& got);
// "nodes.node-1.used_vram_mb" (or a JSON pointer) -> that value in a
// status document; nullptr where a step is missing (engine/json_path.hpp).
const Json* lookup_path(const Json& doc, const std::string& path);

}  // namespace vramsim
