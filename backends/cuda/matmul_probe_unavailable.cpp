// run_matmul_probe for builds without a CUDA toolkit: no figure, one reason.

#include "backends/cuda/matmul_probe.hpp"

namespace vramsim::gpu {

Expected<ProbeReport> run_matmul_probe(const ProbeOptions& options) {
  if (auto err = validate(options)) return *err;
  return no_device_error("vramsim was built without CUDA support");
}

}  // namespace vramsim::gpu
