#include "models/registry.hpp"

namespace vramsim {

// One entry per file of policy variants: the file defines
// register_<name>_policies(PolicyRegistry&).
#define VRAMSIM_POLICY_FILES(X) \
  X(advertisement)              \
  X(sizing)                     \
  X(admission)                  \
  X(autoscaler)                 \
  X(pending)                    \
  X(pending_excludes_installing) \
  X(shutdown)                   \
  X(replica_autoscaling)        \
  X(placement)                  \
  X(placement_first_fit)        \
  X(placement_best_fit)         \
  X(placement_best_fit_gpu)     \
  X(placement_fgd)

#define VRAMSIM_DECLARE(name) void register_##name##_policies(PolicyRegistry& r);
VRAMSIM_POLICY_FILES(VRAMSIM_DECLARE)
#undef VRAMSIM_DECLARE

void register_builtin_policies(PolicyRegistry& r) {
#define VRAMSIM_CALL(name) register_##name##_policies(r);
  VRAMSIM_POLICY_FILES(VRAMSIM_CALL)
#undef VRAMSIM_CALL
}

}  // namespace vramsim
