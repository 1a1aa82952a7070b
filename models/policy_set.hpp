#pragma once
// One choice of variant per policy model. Presets "legacy" and "fixed" pick
// that variant for every model; a mix names variants per model.
#include <map>
#include <memory>
#include <string>

#include "models/admission.hpp"
#include "models/advertisement.hpp"
#include "models/autoscaler.hpp"
#include "models/pending.hpp"
#include "models/placement.hpp"
#include "models/shutdown.hpp"
#include "models/sizing.hpp"

namespace vramsim {

struct PolicySet {
  std::shared_ptr<const AdvertisementPolicy> advertisement;
  std::shared_ptr<const SizingPolicy> sizing;
  std::shared_ptr<const AdmissionPolicy> admission;
  std::shared_ptr<const AutoscalerPolicy> autoscaler;
  std::shared_ptr<const ShutdownPolicy> shutdown;
  // Not part of the presets: `ray` unless a mix names another variant
  // (placement=fgd); only then is it listed in `names`.
  std::shared_ptr<const PlacementPolicy> placement;
  // Also outside the presets (legacy and fixed BioEngine count the same
  // actors): `counts-installing` unless a mix names another.
  std::shared_ptr<const PendingPolicy> pending;
  std::map<std::string, std::string> names;  // model -> variant
  std::string label;                          // "legacy", "fixed" or "mix(...)"
};

// `base` is a preset name; `overrides` model -> variant. Throws
// UnknownPolicyError naming the unknown model or variant.
PolicySet resolve_policies(const std::string& base,
                           const std::map<std::string, std::string>& overrides = {});
// "legacy", "fixed", or "fixed,admission=legacy,autoscaler=legacy" / "admission=legacy".
PolicySet parse_policy_spec(const std::string& spec);
const std::vector<std::string>& policy_models();

}  // namespace vramsim
