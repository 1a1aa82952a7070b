#include "models/registry.hpp"

namespace vramsim {

void register_builtin_policies(PolicyRegistry& r);  // builtin_policies.cpp

PolicyRegistry& PolicyRegistry::instance() {
  static PolicyRegistry r = [] {
    PolicyRegistry reg;
    register_builtin_policies(reg);
    return reg;
  }();
  return r;
}

void PolicyRegistry::add_factory(const std::string& model, const std::string& variant, Factory f) {
  factories_[model][variant] = std::move(f);
}

bool PolicyRegistry::has(const std::string& model, const std::string& variant) const {
  auto m = factories_.find(model);
  return m != factories_.end() && m->second.count(variant) > 0;
}

std::vector<std::string> PolicyRegistry::models() const {
  std::vector<std::string> out;
  for (const auto& [m, _] : factories_) out.push_back(m);
  return out;
}

std::vector<std::string> PolicyRegistry::variants(const std::string& model) const {
  std::vector<std::string> out;
  auto m = factories_.find(model);
  if (m != factories_.end())
    for (const auto& [v, _] : m->second) out.push_back(v);
  return out;
}

std::shared_ptr<const void> PolicyRegistry::make_any(const std::string& model,
                                                     const std::string& variant) const {
  auto m = factories_.find(model);
  if (m == factories_.end()) throw UnknownPolicyError("unknown policy model '" + model + "'");
  auto v = m->second.find(variant);
  if (v == m->second.end()) {
    std::string known;
    for (const auto& [k, _] : m->second) known += (known.empty() ? "" : ", ") + k;
    throw UnknownPolicyError("unknown variant '" + variant + "' for policy model '" + model +
                             "' (expected one of: " + known + ")");
  }
  return v->second();
}

}  // namespace vramsim
