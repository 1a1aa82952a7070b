#include "observers/json_match.hpp"

#include "engine/json_path.hpp"

#include <algorithm>
#include <cmath>

namespace vramsim {

bool json_matches(const Json& want, const Json& got) {
  if (want.is_number() && got.is_number())
    return std::fabs(want.get<double>() - got.get<double>()) <= 1e-9 * std::max(1.0, std::fabs(want.get<double>()));
  if (want.is_object() && got.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it)
      if (!got.contains(it.key()) || !json_matches(it.value(), got[it.key()])) return false;
    return true;
  }
  return want == got;
}

const Json* lookup_path(const Json& doc, const std::string& path) {
  try {
    return json_at_path(doc, json_path_steps(path));
  } catch (const std::invalid_argument&) {
    return nullptr;  // no such field
  }
}

}  // namespace vramsim
