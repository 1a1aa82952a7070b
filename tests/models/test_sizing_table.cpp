// The fraction branch against Python's round(mb / gpu_mb, 2) for every
// catalogue GPU and every mb from 1 to its size. The expected values come from
// data/sizing_round_table.txt, generated once by data/gen_sizing_table.py with
// CPython (see that script); the test decodes it and compares every pair.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/registry.hpp"
#include "models/sizing.hpp"
#include "scenario/scenario.hpp"

namespace vramsim {
namespace {

struct TableRow {
  std::int64_t gpu_mb = 0;
  int k0 = 0;
  std::vector<std::int64_t> firsts;  // first mb at which hundredth k0 + i is reached
};

std::map<std::string, TableRow> load_table() {
  std::ifstream in(std::string(VRAMSIM_SOURCE_DIR) + "/tests/models/data/sizing_round_table.txt");
  std::map<std::string, TableRow> t;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string name;
    TableRow r;
    ss >> name >> r.gpu_mb >> r.k0;
    for (std::int64_t mb; ss >> mb;) r.firsts.push_back(mb);
    t[name] = r;
  }
  return t;
}

TEST(SizingTable, FractionMatchesPythonRoundForEveryCatalogueGpuAndEveryMb) {
  const auto table = load_table();
  ASSERT_EQ(table.size(), gpu_catalogue().size()) << "regenerate the table for the catalogue";
  const auto policy = PolicyRegistry::instance().make<SizingPolicy>("legacy");
  std::size_t pairs = 0, mismatches = 0;
  for (const auto& [name, info] : gpu_catalogue()) {
    auto it = table.find(name);
    ASSERT_NE(it, table.end()) << name;
    const TableRow& row = it->second;
    ASSERT_EQ(row.gpu_mb, info.memory_mb) << name;
    ASSERT_FALSE(row.firsts.empty());
    ASSERT_EQ(row.firsts.front(), 1);
    const ClusterGpuView view{false, info.memory_mb, false};
    std::size_t next = 1;
    int k = row.k0;
    for (std::int64_t mb = 1; mb <= info.memory_mb; ++mb) {
      while (next < row.firsts.size() && row.firsts[next] <= mb) { ++k; ++next; }
      const double want = k / 100.0;  // the double Python's round returns
      const SizingResult r = policy->size(SizingRequest{"X", mb, false}, view);
      ++pairs;
      if (r.branch != "fraction" || r.num_gpus != want) {
        if (++mismatches <= 10)
          ADD_FAILURE() << name << " " << mb << " MB: got " << r.num_gpus << " (" << r.branch
                        << "), Python gives " << want;
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(pairs, 552456u);  // the sum of the catalogue's sizes
}

// Two of the pairs where rounding the exact rational differs from Python.
TEST(SizingTable, RoundsTheBinaryQuotientNotTheRational) {
  EXPECT_EQ(python_round2(2688.0 / 15360.0), 0.17);  // 0.175 is 0.17499999... as a double
  EXPECT_EQ(python_round2(384.0 / 15360.0), 0.03);   // 0.025 is 0.025000000000000001...
  EXPECT_EQ(python_round2(5120.0 / 40960.0), 0.12);  // an exact tie goes to even
  EXPECT_EQ(python_round2(15360.0 / 40960.0), 0.38);
}

}  // namespace
}  // namespace vramsim
