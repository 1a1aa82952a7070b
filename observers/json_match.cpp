#include "observers/json_match.hpp"

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

const Json* lookup_path(const Json& doc, const std::string& dotted) {
  const Json* cur = &doc;
  std::size_t at = 0;
  while (at < dotted.size()) {  // the parts std::getline on '.' gives
    const std::size_t dot = std::min(dotted.find('.', at), dotted.size());
    const std::string part = dotted.substr(at, dot - at);
    if (!cur->is_object() || !cur->contains(part)) return nullptr;
    cur = &(*cur)[part];
    at = dot + 1;
  }
  return cur;
}

}  // namespace vramsim
