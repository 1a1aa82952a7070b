#include "engine/resources.hpp"

#include <gtest/gtest.h>

namespace vramsim {
namespace {

TEST(Amount, FixedPointConversion) {
  EXPECT_EQ(to_amount(0.3), 3000);
  EXPECT_EQ(to_amount(1.0), kAmountScale);
  EXPECT_EQ(to_amount(0.00004), 0);  // below resolution
  EXPECT_EQ(to_amount(0.00006), 1);  // rounds to nearest
  EXPECT_DOUBLE_EQ(to_double(3000), 0.3);
}

TEST(ResourceSet, FractionsSumExactly) {
  ResourceSet total;
  const ResourceSet share{{kGPU, 0.3}};
  for (int i = 0; i < 4; ++i) total += share;
  EXPECT_EQ(total.get_amount(kGPU), 12000);
  EXPECT_EQ(total.get(kGPU), 1.2);
  // In doubles 0.3 + 0.3 + 0.3 != 0.9; in fixed point it is exact.
  ResourceSet three;
  for (int i = 0; i < 3; ++i) three += share;
  EXPECT_TRUE((ResourceSet{{kGPU, 0.9}}) == three);
  EXPECT_TRUE((ResourceSet{{kGPU, 0.9}}).contains(three));
  EXPECT_FALSE((ResourceSet{{kGPU, 1.0}}).contains(total));
  EXPECT_TRUE((ResourceSet{{kGPU, 1.2}}).contains(total));
}

TEST(ResourceSet, GetSetAndAbsentIsZero) {
  ResourceSet r{{kCPU, 4}, {kVramMB, 24576}};
  EXPECT_EQ(r.get(kCPU), 4.0);
  EXPECT_EQ(r.get(kVramMB), 24576.0);
  EXPECT_EQ(r.get(kGPU), 0.0);
  EXPECT_FALSE(r.has(kGPU));
  EXPECT_TRUE(r.has(kCPU));
  r.set(kCPU, 0);
  EXPECT_FALSE(r.has(kCPU));
  EXPECT_EQ(r.amounts().count(kCPU), 0u) << "zero entries are not stored";
  EXPECT_FALSE(r.empty());
  EXPECT_TRUE(ResourceSet{}.empty());
  EXPECT_TRUE(ResourceSet{}.all_zero());
}

TEST(ResourceSet, Contains) {
  const ResourceSet node{{kCPU, 8}, {kGPU, 1}, {kVramMB, 24576}, {slurm_job_resource("17"), 1}};
  EXPECT_TRUE(node.contains({}));
  EXPECT_TRUE(node.contains({{kCPU, 8}}));
  EXPECT_TRUE(node.contains({{kGPU, 0.5}, {kVramMB, 24576}}));
  EXPECT_FALSE(node.contains({{kCPU, 8.0001}}));
  EXPECT_FALSE(node.contains({{kMemory, 1}})) << "a resource the node lacks";
  EXPECT_TRUE(node.contains({{"slurm_job_id:17", 0.001}}));
  EXPECT_FALSE(node.contains({{"slurm_job_id:18", 0.001}}));
}

TEST(ResourceSet, AddSubtract) {
  ResourceSet a{{kCPU, 4}, {kGPU, 1}};
  const ResourceSet b{{kCPU, 1.5}, {kGPU, 0.25}, {kVramMB, 1000}};
  a -= b;
  EXPECT_EQ(a.get(kCPU), 2.5);
  EXPECT_EQ(a.get(kGPU), 0.75);
  EXPECT_EQ(a.get(kVramMB), -1000.0);
  a += b;
  EXPECT_TRUE((a == ResourceSet{{kCPU, 4}, {kGPU, 1}}));
  EXPECT_EQ(a.amounts().count(kVramMB), 0u) << "back to zero: the entry is dropped";
  a -= ResourceSet{{kCPU, 4}, {kGPU, 1}};
  EXPECT_TRUE(a.empty());
  EXPECT_TRUE(a.all_zero());
}

TEST(ResourceSet, ToJsonSortedByNameAsDoubles) {
  const ResourceSet r{{kVramMB, 24576}, {kCPU, 8}, {kGPU, 0.3}};
  const auto j = r.to_json();
  EXPECT_EQ(j.dump(), R"({"CPU":8.0,"GPU":0.3,"VRAM_MB":24576.0})");
  EXPECT_EQ(ResourceSet{}.to_json().dump(), "{}");
}

TEST(ResourceSet, SlurmJobResourceName) { EXPECT_EQ(slurm_job_resource("123"), "slurm_job_id:123"); }


TEST(ResourceInterning, FixedIdsAndStableCustomIds) {
  EXPECT_EQ(intern_resource(kCPU), kCPUId);
  EXPECT_EQ(intern_resource(kGPU), kGPUId);
  EXPECT_EQ(intern_resource(kMemory), kMemoryId);
  EXPECT_EQ(intern_resource(kVramMB), kVramMBId);
  EXPECT_EQ(intern_resource(std::string("GPU")), kGPUId) << "by value, not only by the constant";
  EXPECT_FALSE(find_resource("interning-test:never-used").has_value()) << "a lookup registers nothing";
  const ResourceId a = intern_resource("interning-test:a");
  EXPECT_GE(a, kFixedResources);
  EXPECT_EQ(intern_resource("interning-test:a"), a);
  EXPECT_EQ(find_resource("interning-test:a"), a);
  EXPECT_EQ(resource_name(a), "interning-test:a");
  EXPECT_NE(intern_resource("interning-test:b"), a);
}

TEST(ResourceSet, ByIdAndByNameAgree) {
  ResourceSet r{{kCPU, 2}, {"interning-test:c", 1}};
  EXPECT_EQ(r.get_amount(kCPUId), 20000);
  EXPECT_EQ(r.get_amount(*find_resource("interning-test:c")), 10000);
  r.set_amount(kVramMBId, 5);
  EXPECT_EQ(r.get_amount(kVramMB), 5);
  EXPECT_TRUE(r.stated(kVramMBId));
  r.set_amount(kVramMBId, 0);
  EXPECT_FALSE(r.stated(kVramMB)) << "zero drops the entry";
  EXPECT_EQ(r.get_amount("never-registered-name"), 0);
  EXPECT_FALSE(r.stated("never-registered-name"));
}

TEST(ResourceSet, CustomEntriesKeepMapSemantics) {
  // Entries inserted out of id order compare and print as a map by name would.
  ResourceSet a, b;
  a.set("zz-custom", 1);
  a.set("aa-custom", 2);
  b.set("aa-custom", 2);
  b.set("zz-custom", 1);
  EXPECT_TRUE(a == b);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_EQ(a.to_json().dump(), R"({"aa-custom":2.0,"zz-custom":1.0})");
  const ResourceSet need{{"aa-custom", 2}, {"mm-custom", 0}};
  EXPECT_TRUE(a.contains(need)) << "a stated zero needs nothing";
  EXPECT_FALSE(a.contains(ResourceSet{{"mm-custom", 0.5}}));
  ResourceSet c = a;
  c -= ResourceSet{{"zz-custom", 1}};
  EXPECT_FALSE(c.stated("zz-custom"));
  EXPECT_FALSE(c == a);
  EXPECT_TRUE((ResourceSet{{kCPU, 0}}) != ResourceSet{}) << "a stated zero is part of the set";
  EXPECT_EQ((ResourceSet{{kCPU, 1}, {kCPU, 3}}).get(kCPU), 3.0) << "a repeated name: the last amount";
  EXPECT_EQ((ResourceSet{{"aa-custom", 1}, {"aa-custom", 0}}).get_amount("aa-custom"), 0);
  EXPECT_TRUE((ResourceSet{{"aa-custom", 1}, {"aa-custom", 0}}).stated("aa-custom"));
  EXPECT_NE((ResourceSet{{kCPU, 0}}).hash(), ResourceSet{}.hash());
}
}  // namespace
}  // namespace vramsim
