#include "models/policy_set.hpp"

#include <sstream>
#include <vector>

#include "models/registry.hpp"

namespace vramsim {

const std::vector<std::string>& policy_models() {
  static const std::vector<std::string> m = {"advertisement", "sizing", "admission", "autoscaler",
                                             "shutdown"};
  return m;
}

PolicySet resolve_policies(const std::string& base, const std::map<std::string, std::string>& overrides) {
  if (base != "legacy" && base != "fixed")
    throw UnknownPolicyError("unknown policy preset '" + base + "' (expected legacy or fixed)");
  std::map<std::string, std::string> names;
  for (const auto& m : policy_models()) names[m] = base;
  std::string placement = PlacementPolicy::kDefault;
  std::string pending = PendingPolicy::kDefault;
  for (const auto& [model, variant] : overrides) {
    if (model == PlacementPolicy::kModel || model == PendingPolicy::kModel) {
      (model == PlacementPolicy::kModel ? placement : pending) = variant;
      names[model] = variant;
      continue;
    }
    if (!names.count(model)) {
      std::string known;
      for (const auto& m : policy_models()) known += (known.empty() ? "" : ", ") + m;
      known += std::string(", ") + PlacementPolicy::kModel + ", " + PendingPolicy::kModel;
      throw UnknownPolicyError("unknown policy model '" + model + "' (expected one of: " + known + ")");
    }
    names[model] = variant;
  }
  auto& reg = PolicyRegistry::instance();
  PolicySet p;
  p.advertisement = reg.make<AdvertisementPolicy>(names["advertisement"]);
  p.sizing = reg.make<SizingPolicy>(names["sizing"]);
  p.admission = reg.make<AdmissionPolicy>(names["admission"]);
  p.autoscaler = reg.make<AutoscalerPolicy>(names["autoscaler"]);
  p.shutdown = reg.make<ShutdownPolicy>(names["shutdown"]);
  p.placement = reg.make<PlacementPolicy>(placement);
  p.pending = reg.make<PendingPolicy>(pending);
  p.names = names;
  p.label = base;
  if (!overrides.empty()) {
    std::string mix;
    for (const auto& [model, variant] : overrides) mix += (mix.empty() ? "" : ",") + model + "=" + variant;
    p.label = base + "," + mix;
  }
  return p;
}

PolicySet parse_policy_spec(const std::string& spec) {
  std::string base = "fixed";
  std::map<std::string, std::string> overrides;
  // Every entry between commas is a preset or model=variant: an empty one
  // ("fixed,", ",", "") is a typo, not a default.
  std::vector<std::string> parts;
  for (std::size_t from = 0;;) {
    const auto comma = spec.find(',', from);
    parts.push_back(spec.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  bool first = true;
  for (const std::string& part : parts) {
    if (part.empty())
      throw UnknownPolicyError("expected legacy, fixed or preset,model=variant,... with no empty entry, got '" + spec +
                               "'");
    auto eq = part.find('=');
    if (eq == std::string::npos) {
      if (!first) throw UnknownPolicyError("policy preset '" + part + "' must come first in '" + spec + "'");
      base = part;
    } else {
      overrides[part.substr(0, eq)] = part.substr(eq + 1);
    }
    first = false;
  }
  return resolve_policies(base, overrides);
}

}  // namespace vramsim
