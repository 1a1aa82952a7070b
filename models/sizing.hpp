#pragma once
// GPU sizing at deploy time (the app builder, reference-semantics section 3).
// Runs once per deploy over what the cluster shows at that moment; the result
// is never revisited, which is why the scaled-to-zero case matters.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vramsim {

constexpr double kGpuHandleEpsilon = 0.01;
constexpr double kFractionGrace = 1.1;

struct ClusterGpuView {
  bool vram_advertised = false;                 // VRAM_MB on any node
  std::optional<std::int64_t> min_gpu_total_mb; // smallest over the nodes of their mean GPU size
  bool elastic = false;                         // SLURM mode
};

struct SizingRequest {
  SizingRequest(std::string id = {}, std::optional<std::int64_t> gmb = {}, bool disable = false)
      : app_id(std::move(id)), gpu_memory_mb(gmb), disable_gpu(disable) {}
  std::string app_id;
  std::optional<std::int64_t> gpu_memory_mb;  // -1 = whole GPU
  bool disable_gpu = false;
  // The GPU request in thousandths, stated exactly (an openb pod's): below
  // 1000 a share the fraction branch takes unrounded (465 and 535 fill one
  // GPU); with gpu_memory_mb -1, its thousands are whole GPUs on one node.
  std::optional<std::int64_t> gpu_milli;
  // A GPU request stated as Ray's num_gpus, taken as is (branch "stated").
  std::optional<double> num_gpus;
};

struct SizingResult {
  double num_gpus = 0;
  std::optional<std::int64_t> vram_mb;  // VRAM_MB requested per replica
  std::string branch;   // disabled | stated | whole_gpu_sentinel | vram | fraction | whole_gpu_fallback | error
  std::string warning;
  std::string error;    // user error; the deploy fails with it
  bool ok() const { return error.empty(); }
};

class SizingPolicy {
 public:
  static constexpr const char* kModel = "sizing";
  virtual ~SizingPolicy() = default;
  virtual SizingResult size(const SizingRequest& req, const ClusterGpuView& view) const = 0;
  // Total GPU demand of an app: num_gpus times a count, summed over its
  // deployment classes (admission passes one replica per class, as
  // _sum_resources does). legacy truncates to an int, hiding epsilon demand.
  virtual double sum_num_gpus(const std::vector<std::pair<double, int>>& per_replica) const = 0;
};

// Python's round(x, 2) on a double: the fraction branch's rounding.
double python_round2(double x);

// Shared by the variants: everything but the VRAM-branch condition.
SizingResult size_gpu(const SizingRequest& req, const ClusterGpuView& view, bool take_vram_branch);

}  // namespace vramsim
