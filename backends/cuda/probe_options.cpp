#include "backends/cuda/probe_options.hpp"

#include <string>

namespace vramsim::gpu {

namespace {
Error invalid(const std::string& message) {
  return Error{ErrorKind::InvalidArgument, message};
}
}  // namespace

std::optional<Error> validate(const ProbeOptions& options) {
  if (options.n < 1 || options.n > kMaxN) {
    return invalid("n must be in [1, " + std::to_string(kMaxN) + "], got " +
                   std::to_string(options.n));
  }
  if (options.iterations < 1) {
    return invalid("iterations must be >= 1, got " + std::to_string(options.iterations));
  }
  if (options.warmup < 0) {
    return invalid("warmup must be >= 0, got " + std::to_string(options.warmup));
  }
  if (options.check_n < 1 || options.check_n > kMaxCheckN) {
    return invalid("check-n must be in [1, " + std::to_string(kMaxCheckN) + "], got " +
                   std::to_string(options.check_n));
  }
  return std::nullopt;
}

}  // namespace vramsim::gpu
