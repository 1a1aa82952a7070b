#include "engine/resources.hpp"

#include <cmath>

namespace vramsim {

Amount to_amount(double v) { return static_cast<Amount>(std::llround(v * kAmountScale)); }
double to_double(Amount a) { return static_cast<double>(a) / kAmountScale; }
std::string slurm_job_resource(const std::string& job_id) { return "slurm_job_id:" + job_id; }

ResourceSet::ResourceSet(std::initializer_list<std::pair<const std::string, double>> init) {
  for (const auto& [k, v] : init) values_[k] = to_amount(v);
}

Amount ResourceSet::get_amount(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? 0 : it->second;
}

void ResourceSet::set_amount(const std::string& name, Amount a) {
  if (a == 0) values_.erase(name);
  else values_[name] = a;
}

bool ResourceSet::all_zero() const {
  for (const auto& [k, v] : values_)
    if (v != 0) return false;
  return true;
}

bool ResourceSet::contains(const ResourceSet& req) const {
  for (const auto& [k, v] : req.values_)
    if (v > get_amount(k)) return false;
  return true;
}

ResourceSet& ResourceSet::operator+=(const ResourceSet& o) {
  for (const auto& [k, v] : o.values_) set_amount(k, get_amount(k) + v);
  return *this;
}

ResourceSet& ResourceSet::operator-=(const ResourceSet& o) {
  for (const auto& [k, v] : o.values_) set_amount(k, get_amount(k) - v);
  return *this;
}

nlohmann::ordered_json ResourceSet::to_json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : values_) j[k] = to_double(v);
  return j;
}

}  // namespace vramsim
