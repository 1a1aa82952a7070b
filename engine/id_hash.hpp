#pragma once
// A hash for the run's ids ("node-17", "1042", "slurm_job_id:1042") in
// unordered tables. Ids that differ only in their trailing number hash to
// consecutive values, so ids made one after another sit in neighbouring
// buckets. A run touches its nodes and jobs mostly in the order it made them
// (a warm start registers them in turn, a mass scale-down stops them in
// turn); std::hash scatters them over the whole table, and once the table
// outgrows the cache every such lookup misses, so the cost per event grows
// with the cluster. Iteration order is not part of any table's contract
// that uses it.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace vramsim {

struct IdHash {
  std::size_t operator()(std::string_view s) const noexcept {
    // The trailing digits, at most 18 (they fit 64 bits); more belong to the prefix.
    std::size_t i = s.size();
    while (i > 0 && s.size() - i < 18 && s[i - 1] >= '0' && s[i - 1] <= '9') --i;
    if (i == s.size()) return std::hash<std::string_view>{}(s);
    std::uint64_t n = 0;
    for (std::size_t k = i; k < s.size(); ++k) n = n * 10 + static_cast<std::uint64_t>(s[k] - '0');
    return std::hash<std::string_view>{}(s.substr(0, i)) + static_cast<std::size_t>(n);
  }
  std::size_t operator()(const std::string& s) const noexcept { return (*this)(std::string_view(s)); }
};

}  // namespace vramsim
