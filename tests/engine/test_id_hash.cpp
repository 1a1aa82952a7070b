#include "engine/id_hash.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <unordered_map>

namespace vramsim {
namespace {

TEST(IdHash, IdsThatDifferInTheirTrailingNumberHashToConsecutiveValues) {
  const IdHash h;
  for (const std::string prefix : {"node-", "", "slurm_job_id:"})
    for (long k : {1L, 9L, 99L, 9999L, 123456789L}) {
      const std::size_t a = h(prefix + std::to_string(k)), b = h(prefix + std::to_string(k + 1));
      EXPECT_EQ(b - a, 1u) << prefix << k;
    }
  EXPECT_NE(h(std::string("node-1")), h(std::string("job-1"))) << "the prefix counts";
}

TEST(IdHash, NamesWithoutATrailingNumberHashAsStdHash) {
  const IdHash h;
  for (const std::string s : {"", "head", "node-", "A100-SXM", "12a"})
    EXPECT_EQ(h(s), std::hash<std::string_view>{}(s)) << s;
}

TEST(IdHash, LongDigitRunsAndLeadingZerosStayDistinctKeys) {
  // Past 18 digits the leading ones join the prefix (no overflow); "node-07"
  // and "node-7" share a hash but remain two keys.
  const IdHash h;
  const std::string long_a = "x" + std::string(25, '9'), long_b = "x1" + std::string(24, '9');
  EXPECT_NE(h(long_a), h(long_b));
  std::unordered_map<std::string, int, IdHash> m;
  m["node-7"] = 1;
  m["node-07"] = 2;
  m[long_a] = 3;
  m[long_b] = 4;
  EXPECT_EQ(m.size(), 4u);
  EXPECT_EQ(m.at("node-7"), 1);
  EXPECT_EQ(m.at("node-07"), 2);
  EXPECT_EQ(m.at(long_a), 3);
  EXPECT_EQ(m.at(long_b), 4);
}

}  // namespace
}  // namespace vramsim
