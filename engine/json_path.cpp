#include "engine/json_path.hpp"

#include "engine/text.hpp"

namespace vramsim {

std::vector<std::string> json_path_steps(const std::string& path) {
  std::vector<std::string> out;
  if (path.empty()) throw std::invalid_argument("empty path");
  std::string cur;
  if (path[0] == '/') {
    for (std::size_t i = 1; i <= path.size(); ++i) {
      if (i == path.size() || path[i] == '/') {
        out.push_back(cur);
        cur.clear();
      } else if (path[i] == '~') {
        if (i + 1 < path.size() && (path[i + 1] == '0' || path[i + 1] == '1')) cur += path[++i] == '0' ? '~' : '/';
        else throw std::invalid_argument("'~' must be followed by 0 or 1 in a JSON pointer");
      } else {
        cur += path[i];
      }
    }
  } else {
    for (std::size_t i = 0; i <= path.size(); ++i) {
      if (i == path.size() || path[i] == '.') {
        out.push_back(cur);
        cur.clear();
      } else {
        cur += path[i];
      }
    }
  }
  for (const auto& t : out)
    if (t.empty()) throw std::invalid_argument("empty step in the path");
  return out;
}

const Json* json_at_path(const Json& doc, const std::vector<std::string>& steps) {
  const Json* cur = &doc;
  for (const auto& step : steps) {
    if (cur->is_object()) {
      const auto it = cur->find(step);
      if (it == cur->end()) return nullptr;
      cur = &*it;
    } else if (cur->is_array()) {
      const auto k = parse_integer<std::size_t>(step);
      if (!k || *k >= cur->size()) return nullptr;
      cur = &(*cur)[*k];
    } else {
      return nullptr;
    }
  }
  return cur;
}

}  // namespace vramsim
