#pragma once
// Paths into a JSON document, as users write them: dotted steps
// ("cluster.partition.0.gpus") or a JSON pointer ("/cluster/partition/0/gpus",
// with ~0 for '~' and ~1 for '/'); a step into an array is its index.
// `sweep --set`, `plan --vary` and a status action's `expect` read them.
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/trace.hpp"  // Json

namespace vramsim {

// The steps of `path`; throws std::invalid_argument for an empty path, an
// empty step or a '~' a pointer does not allow.
std::vector<std::string> json_path_steps(const std::string& path);
// The value at those steps of `doc`; nullptr where one is missing.
const Json* json_at_path(const Json& doc, const std::vector<std::string>& steps);

}  // namespace vramsim
