#include "engine/node_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory_resource>
#include <set>
#include <vector>

namespace vramsim {
namespace {

// Counts what reaches the upstream resource.
class CountingResource : public std::pmr::memory_resource {
 public:
  std::size_t allocations = 0, deallocations = 0, bytes_out = 0;

 private:
  void* do_allocate(std::size_t bytes, std::size_t align) override {
    ++allocations;
    bytes_out += bytes;
    return std::pmr::new_delete_resource()->allocate(bytes, align);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
    ++deallocations;
    bytes_out -= bytes;
    std::pmr::new_delete_resource()->deallocate(p, bytes, align);
  }
  bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override { return this == &o; }
};

// A freed node is the next one of its size handed out; a node of another
// size is not.
TEST(NodePool, AFreedNodeIsReusedForItsSize) {
  CountingResource up;
  NodePool pool(&up);
  void* a = pool.allocate(48, 8);
  void* b = pool.allocate(48, 8);
  EXPECT_NE(a, b);
  pool.deallocate(a, 48, 8);
  void* c = pool.allocate(64, 8);
  EXPECT_NE(c, a) << "another size class";
  EXPECT_EQ(pool.allocate(48, 8), a);
  EXPECT_EQ(up.allocations, 1u) << "one 4 KiB block holds them all";
}

// Every node is aligned to 16 bytes and none overlaps another.
TEST(NodePool, NodesAreAlignedAndApart) {
  NodePool pool;
  std::vector<std::pair<std::uintptr_t, std::size_t>> got;
  for (std::size_t size = 1; size <= 256; size += 7) {
    void* p = pool.allocate(size, alignof(std::max_align_t));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u) << size;
    got.push_back({reinterpret_cast<std::uintptr_t>(p), size});
  }
  std::sort(got.begin(), got.end());
  for (std::size_t i = 1; i < got.size(); ++i) EXPECT_GE(got[i].first, got[i - 1].first + got[i - 1].second);
}

// Above 256 bytes, or a stricter alignment, each block goes upstream and
// back; the pool's own blocks go back when it is destroyed.
TEST(NodePool, LargeBlocksGoUpstreamAndEverythingComesBack) {
  CountingResource up;
  {
    NodePool pool(&up);
    void* big = pool.allocate(257, 8);
    EXPECT_EQ(up.allocations, 1u);
    pool.deallocate(big, 257, 8);
    EXPECT_EQ(up.deallocations, 1u);
    void* aligned = pool.allocate(32, 64);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned) % 64, 0u);
    pool.deallocate(aligned, 32, 64);
    // Blocks double from 4 KiB: 10,000 nodes of 48 bytes take a few.
    std::vector<void*> nodes;
    for (int i = 0; i < 10000; ++i) nodes.push_back(pool.allocate(48, 8));
    EXPECT_LE(up.allocations, 2u + 10u);
    for (void* p : nodes) pool.deallocate(p, 48, 8);
  }
  EXPECT_EQ(up.bytes_out, 0u);
  EXPECT_EQ(up.allocations, up.deallocations);
}

// Node containers over it behave as over the heap, through churn.
TEST(NodePool, ContainersOverItMatchTheirHeapTwins) {
  NodePool pool;
  std::pmr::set<std::int64_t> a(&pool);
  std::pmr::map<std::int64_t, std::int64_t> m(&pool);
  std::set<std::int64_t> ref;
  std::uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const auto v = static_cast<std::int64_t>(x % 2000);
    if (x & 1) {
      a.insert(v);
      ref.insert(v);
      m[v] = i;
    } else {
      a.erase(v);
      ref.erase(v);
      m.erase(v);
    }
  }
  EXPECT_TRUE(std::equal(a.begin(), a.end(), ref.begin(), ref.end()));
  EXPECT_EQ(m.size(), ref.size());
}

}  // namespace
}  // namespace vramsim
