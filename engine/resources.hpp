#pragma once
// Resource amounts as Ray's scheduler holds them: fixed point with 1e-4
// resolution, so 0.3 + 0.3 + 0.3 is exactly 0.9 and never over-books a device.
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace vramsim {

using Amount = std::int64_t;  // units of 1e-4
constexpr Amount kAmountScale = 10000;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;  // bytes: memory amounts are in bytes
Amount to_amount(double v);
double to_double(Amount a);

// Well-known resource names.
inline const std::string kCPU = "CPU";
inline const std::string kGPU = "GPU";
inline const std::string kMemory = "memory";  // bytes
inline const std::string kVramMB = "VRAM_MB";
std::string slurm_job_resource(const std::string& job_id);  // "slurm_job_id:<id>"

// A sparse map name -> amount; absent means zero. set() and the arithmetic
// drop zero entries; a request built from an initializer list keeps the
// amounts it states, zeros included ({CPU: 0} is not the same request as {}).
class ResourceSet {
 public:
  ResourceSet() = default;
  ResourceSet(std::initializer_list<std::pair<const std::string, double>> init);

  double get(const std::string& name) const { return to_double(get_amount(name)); }
  Amount get_amount(const std::string& name) const;
  bool has(const std::string& name) const { return get_amount(name) != 0; }
  // The name appears in the set, even with a stated amount of zero.
  bool stated(const std::string& name) const { return values_.count(name) > 0; }
  void set(const std::string& name, double v) { set_amount(name, to_amount(v)); }
  void set_amount(const std::string& name, Amount a);

  bool empty() const { return values_.empty(); }
  bool all_zero() const;
  // Every entry of `req` is <= ours.
  bool contains(const ResourceSet& req) const;
  ResourceSet& operator+=(const ResourceSet& o);
  ResourceSet& operator-=(const ResourceSet& o);
  bool operator==(const ResourceSet& o) const = default;

  const std::map<std::string, Amount>& amounts() const { return values_; }
  nlohmann::ordered_json to_json() const;  // name -> double, sorted by name

 private:
  std::map<std::string, Amount> values_;
};

}  // namespace vramsim
