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
  if (options.samples < 1 || options.samples > kMaxSamples) {
    return invalid("samples must be in [1, " + std::to_string(kMaxSamples) + "], got " +
                   std::to_string(options.samples));
  }
  if (!(options.sample_ms > 0) || options.sample_ms > kMaxSampleMs) {
    return invalid("sample-ms must be in (0, " + std::to_string(static_cast<int>(kMaxSampleMs)) + "], got " +
                   std::to_string(options.sample_ms));
  }
  if (!(options.warmup_ms >= 0) || options.warmup_ms > kMaxWarmupMs) {
    return invalid("warmup-ms must be in [0, " + std::to_string(static_cast<int>(kMaxWarmupMs)) + "], got " +
                   std::to_string(options.warmup_ms));
  }
  if (options.check_samples < 1 || options.check_samples > kMaxCheckSamples) {
    return invalid("check-samples must be in [1, " + std::to_string(kMaxCheckSamples) + "], got " +
                   std::to_string(options.check_samples));
  }
  return std::nullopt;
}

}  // namespace vramsim::gpu
