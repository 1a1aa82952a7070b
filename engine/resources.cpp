#include "engine/resources.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "engine/id_hash.hpp"

namespace vramsim {

Amount to_amount(double v) { return static_cast<Amount>(std::llround(v * kAmountScale)); }
std::string slurm_job_resource(const std::string& job_id) { return "slurm_job_id:" + job_id; }

namespace {

// Process-wide: ids must mean the same in every set. A deque keeps names at
// stable addresses as it grows.
struct Registry {
  std::mutex mu;
  std::deque<std::string> names{kCPU, kGPU, kMemory, kVramMB};
  std::unordered_map<std::string, ResourceId, IdHash> ids{{kCPU, kCPUId}, {kGPU, kGPUId}, {kMemory, kMemoryId},
                                                  {kVramMB, kVramMBId}};
};

Registry& registry() {
  static Registry r;
  return r;
}

// The fixed names without the lock: they never change.
std::optional<ResourceId> fixed_id(const std::string& name) {
  // Callers mostly pass the constants themselves: compare addresses first.
  if (&name == &kCPU) return kCPUId;
  if (&name == &kGPU) return kGPUId;
  if (&name == &kMemory) return kMemoryId;
  if (&name == &kVramMB) return kVramMBId;
  if (name == kCPU) return kCPUId;
  if (name == kGPU) return kGPUId;
  if (name == kMemory) return kMemoryId;
  if (name == kVramMB) return kVramMBId;
  return std::nullopt;
}

}  // namespace

ResourceId intern_resource(const std::string& name) {
  if (auto f = fixed_id(name)) return *f;
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto [it, fresh] = r.ids.try_emplace(name, static_cast<ResourceId>(r.names.size()));
  if (fresh) r.names.push_back(name);
  return it->second;
}

std::optional<ResourceId> find_resource(const std::string& name) {
  if (auto f = fixed_id(name)) return f;
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.ids.find(name);
  if (it == r.ids.end()) return std::nullopt;
  return it->second;
}

const std::string& resource_name(ResourceId id) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return r.names.at(id);
}

ResourceSet::ResourceSet(std::initializer_list<std::pair<const std::string, double>> init) {
  // Each amount is kept as stated, zero included; a repeated name takes the
  // last one, as assigning into a map would.
  for (const auto& [k, v] : init) {
    const ResourceId id = intern_resource(k);
    const Amount a = to_amount(v);
    if (id < kFixedResources) {
      fixed_[id] = a;
      fixed_mask_ |= 1u << id;
      continue;
    }
    auto it = std::lower_bound(custom_.begin(), custom_.end(), id,
                               [](const auto& e, ResourceId x) { return e.first < x; });
    if (it != custom_.end() && it->first == id) it->second = a;
    else custom_.insert(it, {id, a});
  }
}

Amount ResourceSet::lookup_amount(const std::string& name) const {
  auto id = find_resource(name);
  return id ? get_amount(*id) : 0;
}

bool ResourceSet::stated(const std::string& name) const {
  auto id = find_resource(name);
  return id && stated(*id);
}

Amount ResourceSet::get_amount(ResourceId id) const {
  if (id < kFixedResources) return fixed_[id];
  auto it = std::lower_bound(custom_.begin(), custom_.end(), id,
                             [](const auto& e, ResourceId x) { return e.first < x; });
  return it != custom_.end() && it->first == id ? it->second : 0;
}

bool ResourceSet::stated(ResourceId id) const {
  if (id < kFixedResources) return fixed_mask_ & (1u << id);
  auto it = std::lower_bound(custom_.begin(), custom_.end(), id,
                             [](const auto& e, ResourceId x) { return e.first < x; });
  return it != custom_.end() && it->first == id;
}

void ResourceSet::set_amount(ResourceId id, Amount a) {
  if (id < kFixedResources) {
    fixed_[id] = a;
    if (a == 0) fixed_mask_ &= ~(1u << id);
    else fixed_mask_ |= 1u << id;
    return;
  }
  auto it = std::lower_bound(custom_.begin(), custom_.end(), id,
                             [](const auto& e, ResourceId x) { return e.first < x; });
  const bool found = it != custom_.end() && it->first == id;
  if (a == 0) {
    if (found) custom_.erase(it);
  } else if (found) {
    it->second = a;
  } else {
    custom_.insert(it, {id, a});
  }
}

bool ResourceSet::all_zero() const {
  bool zero = true;
  for_each([&](ResourceId, Amount v) { zero = zero && v == 0; });
  return zero;
}

bool ResourceSet::contains(const ResourceSet& req) const {
  for (ResourceId i = 0; i < kFixedResources; ++i)
    if ((req.fixed_mask_ & (1u << i)) && req.fixed_[i] > fixed_[i]) return false;
  // Both sorted by id: one merge walk.
  auto it = custom_.begin();
  for (const auto& [id, v] : req.custom_) {
    while (it != custom_.end() && it->first < id) ++it;
    const Amount have = it != custom_.end() && it->first == id ? it->second : 0;
    if (v > have) return false;
  }
  return true;
}

ResourceSet& ResourceSet::operator+=(const ResourceSet& o) {
  o.for_each([this](ResourceId id, Amount v) { set_amount(id, get_amount(id) + v); });
  return *this;
}

ResourceSet& ResourceSet::operator-=(const ResourceSet& o) {
  o.for_each([this](ResourceId id, Amount v) { set_amount(id, get_amount(id) - v); });
  return *this;
}

std::size_t ResourceSet::hash() const {
  std::size_t h = fixed_mask_;
  auto mix = [&h](std::uint64_t v) { h ^= std::hash<std::uint64_t>{}(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for_each([&](ResourceId id, Amount v) {
    mix(id);
    mix(static_cast<std::uint64_t>(v));
  });
  return h;
}

std::map<std::string, Amount> ResourceSet::amounts() const {
  std::map<std::string, Amount> out;
  for_each([&](ResourceId id, Amount v) { out.emplace(resource_name(id), v); });
  return out;
}

nlohmann::ordered_json ResourceSet::to_json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : amounts()) j[k] = to_double(v);
  return j;
}

}  // namespace vramsim
