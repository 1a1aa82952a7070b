#include "models/sizing.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "models/registry.hpp"

namespace vramsim {

double python_round2(double x) {
  // Python's round(x, 2) rounds the exact binary value of the double x (not
  // the rational it came from) to two decimals, half to even, then reads the
  // decimal back. glibc's printf converts exactly and rounds the same way.
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return std::strtod(buf, nullptr);
}

SizingResult size_gpu(const SizingRequest& req, const ClusterGpuView& view, bool take_vram_branch) {
  SizingResult r;
  if (req.disable_gpu || (!req.num_gpus && (!req.gpu_memory_mb || *req.gpu_memory_mb == 0))) {
    r.branch = "disabled";
    return r;
  }
  if (req.num_gpus) {
    r.num_gpus = *req.num_gpus;
    r.branch = "stated";
    return r;
  }
  const std::int64_t gmb = *req.gpu_memory_mb;
  if (gmb == -1) {
    r.num_gpus = req.gpu_milli && *req.gpu_milli >= 1000 ? static_cast<double>(*req.gpu_milli / 1000) : 1.0;
    r.branch = "whole_gpu_sentinel";
    return r;
  }
  if (gmb < 0) {
    r.branch = "error";
    r.error = "Application '" + req.app_id + "': gpu_memory_mb must be a positive number of MB or -1, got " +
              std::to_string(gmb);
    return r;
  }
  if (take_vram_branch) {
    r.num_gpus = kGpuHandleEpsilon;
    r.vram_mb = gmb;
    r.branch = "vram";
    return r;
  }
  if (view.min_gpu_total_mb && *view.min_gpu_total_mb > 0) {
    const double f = req.gpu_milli ? static_cast<double>(*req.gpu_milli) / 1000.0
                                   : python_round2(static_cast<double>(gmb) / static_cast<double>(*view.min_gpu_total_mb));
    if (f > kFractionGrace) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "Application '%s' requests gpu_memory_mb=%lld, which does not fit the smallest GPU on "
                    "the cluster (%lld MB)",
                    req.app_id.c_str(), static_cast<long long>(gmb),
                    static_cast<long long>(*view.min_gpu_total_mb));
      r.branch = "error";
      r.error = buf;
      return r;
    }
    r.num_gpus = std::min(1.0, f);
    r.branch = "fraction";
    return r;
  }
  r.num_gpus = 1.0;
  r.branch = "whole_gpu_fallback";
  r.warning = "no GPU visible on the cluster; reserving a whole GPU for each replica of '" +
              req.app_id + "'";
  return r;
}

namespace {

class LegacySizing final : public SizingPolicy {
 public:
  SizingResult size(const SizingRequest& req, const ClusterGpuView& view) const override {
    return size_gpu(req, view, view.vram_advertised);
  }
  double sum_num_gpus(const std::vector<std::pair<double, int>>& per_replica) const override {
    double total = 0;
    for (auto [g, n] : per_replica) total += g * n;
    return std::trunc(total);  // int(): 4 x 0.01 sums to 0 and hides the GPU demand
  }
};

// fixed: an elastic cluster with no GPU visible yet asks for VRAM up front, so
// the replica waits for a node that advertises it instead of locking in a
// whole GPU; num_gpus stays a float when summed.
class FixedSizing final : public SizingPolicy {
 public:
  SizingResult size(const SizingRequest& req, const ClusterGpuView& view) const override {
    const bool no_gpu_known = !view.min_gpu_total_mb.has_value();
    return size_gpu(req, view, view.vram_advertised || (view.elastic && no_gpu_known));
  }
  double sum_num_gpus(const std::vector<std::pair<double, int>>& per_replica) const override {
    double total = 0;
    for (auto [g, n] : per_replica) total += g * n;
    return total;
  }
};

}  // namespace

void register_sizing_policies(PolicyRegistry& r) {
  r.add<SizingPolicy, LegacySizing>("legacy");
  r.add<SizingPolicy, FixedSizing>("fixed");
}

}  // namespace vramsim
