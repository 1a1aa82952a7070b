#pragma once
// Resource amounts as Ray's scheduler holds them: fixed point with 1e-4
// resolution, so 0.3 + 0.3 + 0.3 is exactly 0.9 and never over-books a device.
//
// Resource names are interned once: CPU, GPU, memory and VRAM_MB sit at fixed
// dense ids 0..3, and every other name (slurm_job_id:<id>, accelerator types)
// gets the next small id when first used. A ResourceSet keeps the four fixed
// ones inline and the rest in a short vector sorted by id, so the scheduler's
// hot path compares integers, never strings.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace vramsim {

using Amount = std::int64_t;  // units of 1e-4
constexpr Amount kAmountScale = 10000;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;  // bytes: memory amounts are in bytes
constexpr std::int64_t kBytesPerMiB = 1024 * 1024;  // a MiB in bytes, for whole-MiB amounts
Amount to_amount(double v);
inline double to_double(Amount a) { return static_cast<double>(a) / kAmountScale; }

// Well-known resource names.
inline const std::string kCPU = "CPU";
inline const std::string kGPU = "GPU";
inline const std::string kMemory = "memory";  // bytes
inline const std::string kVramMB = "VRAM_MB";
std::string slurm_job_resource(const std::string& job_id);  // "slurm_job_id:<id>"

using ResourceId = std::uint32_t;
constexpr ResourceId kCPUId = 0, kGPUId = 1, kMemoryId = 2, kVramMBId = 3;
constexpr ResourceId kFixedResources = 4;
// The id of a name, registering it on first use (thread-safe).
ResourceId intern_resource(const std::string& name);
// The id of a name already registered; nullopt otherwise (registers nothing).
std::optional<ResourceId> find_resource(const std::string& name);
const std::string& resource_name(ResourceId id);

// A sparse map name -> amount; absent means zero. set() and the arithmetic
// drop zero entries; a request built from an initializer list keeps the
// amounts it states, zeros included ({CPU: 0} is not the same request as {}).
class ResourceSet {
 public:
  ResourceSet() = default;
  ResourceSet(std::initializer_list<std::pair<const std::string, double>> init);

  double get(const std::string& name) const { return to_double(get_amount(name)); }
  Amount get_amount(const std::string& name) const {
    // Callers mostly pass the constants themselves: no lookup for those.
    if (&name == &kCPU) return fixed_[kCPUId];
    if (&name == &kGPU) return fixed_[kGPUId];
    if (&name == &kMemory) return fixed_[kMemoryId];
    if (&name == &kVramMB) return fixed_[kVramMBId];
    return lookup_amount(name);
  }
  bool has(const std::string& name) const { return get_amount(name) != 0; }
  bool has(ResourceId id) const { return get_amount(id) != 0; }
  // The name appears in the set, even with a stated amount of zero.
  bool stated(const std::string& name) const;
  void set(const std::string& name, double v) { set_amount(name, to_amount(v)); }
  void set_amount(const std::string& name, Amount a) { set_amount(intern_resource(name), a); }

  // The same by id: no string on the way.
  Amount get_amount(ResourceId id) const;
  bool stated(ResourceId id) const;
  void set_amount(ResourceId id, Amount a);

  bool empty() const { return fixed_mask_ == 0 && custom_.empty(); }
  bool all_zero() const;
  // Every entry of `req` is <= ours.
  bool contains(const ResourceSet& req) const;
  ResourceSet& operator+=(const ResourceSet& o);
  ResourceSet& operator-=(const ResourceSet& o);
  bool operator==(const ResourceSet& o) const = default;

  // Calls fn(id, amount) for every entry, fixed ones first, then by id.
  template <class F>
  void for_each(F&& fn) const {
    for (ResourceId i = 0; i < kFixedResources; ++i)
      if (fixed_mask_ & (1u << i)) fn(i, fixed_[i]);
    for (const auto& [id, a] : custom_) fn(id, a);
  }
  std::size_t hash() const;

  std::map<std::string, Amount> amounts() const;  // by name
  nlohmann::ordered_json to_json() const;         // name -> double, sorted by name

 private:
  Amount lookup_amount(const std::string& name) const;
  std::array<Amount, kFixedResources> fixed_{};  // 0 where not stated
  std::uint32_t fixed_mask_ = 0;                 // bit i: fixed resource i is stated
  std::vector<std::pair<ResourceId, Amount>> custom_;  // sorted by id
};

struct ResourceSetHash {
  std::size_t operator()(const ResourceSet& r) const { return r.hash(); }
};

}  // namespace vramsim
