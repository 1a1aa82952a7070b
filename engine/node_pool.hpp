#pragma once
// A memory resource for node containers (std::pmr::set, map, unordered_map)
// whose nodes come and go by the million: a freed node goes on a free list
// of its size and is the next one of that size handed out; new nodes are cut
// from blocks that grow from 4 KiB to 256 KiB. Allocation and deallocation
// are a few instructions each, against a search over its chunks on every
// deallocation in std::pmr::unsynchronized_pool_resource. Memory is held
// until the resource is destroyed: at most the containers' peak. Single-
// threaded, as the containers that use it; blocks above 256 bytes go to the
// upstream resource, each on its own.
#include <algorithm>
#include <array>
#include <cstddef>
#include <memory_resource>
#include <new>
#include <vector>

namespace vramsim {

class NodePool : public std::pmr::memory_resource {
 public:
  explicit NodePool(std::pmr::memory_resource* upstream = std::pmr::get_default_resource()) : upstream_(upstream) {}
  ~NodePool() override {
    for (const Block& b : blocks_) upstream_->deallocate(b.data, b.bytes, kAlign);
  }
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;

 private:
  static constexpr std::size_t kAlign = alignof(std::max_align_t);  // 16
  static constexpr std::size_t kLargest = 256;                      // bytes of the largest pooled node
  static constexpr std::size_t kFirstBlock = 4096, kLargestBlock = 256 * 1024;
  struct Free {
    Free* next;
  };
  struct Block {
    void* data;
    std::size_t bytes;
  };

  static std::size_t size_class(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign; }  // 1..16

  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    if (bytes > kLargest || alignment > kAlign) return upstream_->allocate(bytes, alignment);
    const std::size_t c = size_class(bytes ? bytes : 1);
    if (Free* f = free_[c]) {
      free_[c] = f->next;
      return f;
    }
    const std::size_t need = c * kAlign;
    if (static_cast<std::size_t>(end_ - next_) < need) grow();
    void* p = next_;
    next_ += need;
    return p;
  }

  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    if (bytes > kLargest || alignment > kAlign) return upstream_->deallocate(p, bytes, alignment);
    const std::size_t c = size_class(bytes ? bytes : 1);
    free_[c] = new (p) Free{free_[c]};
  }

  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

  // A new block, twice the last one up to kLargestBlock (each holds the
  // largest node); what was left of the last, less than one node, is unused.
  void grow() {
    const std::size_t bytes = blocks_.empty() ? kFirstBlock : std::min(blocks_.back().bytes * 2, kLargestBlock);
    blocks_.push_back({upstream_->allocate(bytes, kAlign), bytes});
    next_ = static_cast<std::byte*>(blocks_.back().data);
    end_ = next_ + bytes;
  }

  std::pmr::memory_resource* upstream_;
  std::array<Free*, kLargest / kAlign + 1> free_{};  // by size class; [0] unused
  std::byte *next_ = nullptr, *end_ = nullptr;      // the unused rest of the newest block
  std::vector<Block> blocks_;
};

}  // namespace vramsim
