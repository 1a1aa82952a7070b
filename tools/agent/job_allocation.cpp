#include "tools/agent/job_allocation.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <map>
#include <string_view>

namespace vramsim::agent {

namespace {

// A whole number >= `least`, all of `text`; nullopt otherwise.
std::optional<std::int64_t> whole(std::string_view text, std::int64_t least) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < least) return std::nullopt;
  return v;
}
std::optional<std::int64_t> positive(std::string_view text) { return whole(text, 1); }

std::optional<std::int64_t> positive_env(const Environment& env, const char* name) {
  const char* v = env(name);
  return v ? positive(v) : std::nullopt;
}

std::vector<std::string> split_commas(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto comma = s.find(',', start);
    out.emplace_back(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

}  // namespace

JobAllocation read_job_allocation(const Environment& env, int num_cpus, int host_cpus, std::int64_t host_memory,
                                  std::optional<std::int64_t> cgroup_limit) {
  JobAllocation a;
  if (auto c = positive_env(env, "SLURM_CPUS_ON_NODE"); c && *c <= std::numeric_limits<int>::max()) {
    a.cpus = static_cast<int>(*c);
    a.cpus_from = "SLURM_CPUS_ON_NODE";
  } else if (num_cpus >= 0) {
    a.cpus = num_cpus;
    a.cpus_from = "--num-cpus";
  } else {
    a.cpus = host_cpus;
    a.cpus_from = "host";
  }
  constexpr std::int64_t kMaxMiB = std::numeric_limits<std::int64_t>::max() / kMiB;
  if (auto per_node = positive_env(env, "SLURM_MEM_PER_NODE"); per_node && *per_node <= kMaxMiB) {
    a.memory_bytes = *per_node * kMiB;
    a.memory_from = "SLURM_MEM_PER_NODE";
  } else if (auto per_cpu = positive_env(env, "SLURM_MEM_PER_CPU");
             per_cpu && a.cpus > 0 && *per_cpu <= kMaxMiB / a.cpus) {
    a.memory_bytes = *per_cpu * a.cpus * kMiB;
    a.memory_from = "SLURM_MEM_PER_CPU x " + std::to_string(a.cpus);
  } else if (cgroup_limit && *cgroup_limit > 0 && (host_memory <= 0 || *cgroup_limit < host_memory)) {
    a.memory_bytes = *cgroup_limit;
    a.memory_from = "cgroup memory limit";
  } else {
    a.memory_bytes = host_memory;
    a.memory_from = "host";
  }
  a.gpus_from = "every device listed";
  if (const char* v = env("CUDA_VISIBLE_DEVICES")) {
    a.visible_gpus = split_commas(v);
    a.gpus_from = std::string("CUDA_VISIBLE_DEVICES=") + v;
  }
  return a;
}

std::optional<std::int64_t> cgroup_memory_limit() {
  std::ifstream self("/proc/self/cgroup");
  std::string line;
  while (std::getline(self, line)) {
    // v2: "0::/path"; v1: "N:memory:/path" (or "N:...,memory,...:/path").
    auto c1 = line.find(':'), c2 = line.find(':', c1 == std::string::npos ? 0 : c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1), path = line.substr(c2 + 1);
    std::string file;
    if (controllers.empty()) {
      file = "/sys/fs/cgroup" + path + "/memory.max";
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      file = "/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes";
    } else {
      continue;
    }
    std::ifstream in(file);
    std::string text;
    if (!(in >> text)) continue;
    if (auto v = positive(text)) return v;  // "max": no limit
  }
  return std::nullopt;
}

std::optional<std::vector<int>> job_device_positions(std::size_t listed,
                                                     const std::optional<std::vector<std::string>>& visible) {
  std::vector<int> out;
  auto identity = [&] {
    for (std::size_t i = 0; i < listed; ++i) out.push_back(static_cast<int>(i));
    return out;
  };
  if (!visible) return identity();
  for (const auto& v : *visible) {
    auto index = whole(v, 0);
    if (!index || *index >= static_cast<std::int64_t>(listed)) {
      out.clear();
      if (visible->size() == listed) return identity();
      return std::nullopt;
    }
    out.push_back(static_cast<int>(*index));
  }
  return out;
}

std::vector<slurm::DeviceUsage> usage_by_ordinal(const std::vector<slurm::DeviceUsage>& rows,
                                                 const std::optional<std::vector<std::string>>& visible) {
  std::map<int, std::int64_t> by_index;
  for (const auto& r : rows) by_index[r.index] = r.used_bytes;
  // The listing's positions are nvidia-smi's indices, 0..n-1.
  std::size_t listed = 0;
  while (by_index.count(static_cast<int>(listed)) != 0) ++listed;
  std::vector<slurm::DeviceUsage> out;
  auto positions = job_device_positions(listed, visible);
  if (!positions) return out;
  for (std::size_t ordinal = 0; ordinal < positions->size(); ++ordinal)
    out.push_back({static_cast<int>(ordinal), by_index.at((*positions)[ordinal])});
  return out;
}

}  // namespace vramsim::agent
