#pragma once
// An allocator for long columns that grow to many megabytes (a run's
// request records, a trace's jobs): a block of 128 KiB or more is rounded up
// to whole 2 MiB pages, aligned to 2 MiB and marked for transparent huge
// pages (madvise), so the kernel maps it in 2 MiB pages as it is first
// touched, not a fault per 4 KiB. On a 2-core VM a 4 KiB fault costs some
// 11 us and a 2 MiB one some 125 us (zeroing included): from 128 KiB (32
// faults) on, the huge page is the cheaper, at the price of up to 1.9 MiB
// of memory per block resident and never touched. Smaller blocks, and
// kernels without the advice, get plain operator new's memory.
#include <cstddef>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace vramsim {

inline constexpr std::size_t kHugePage = std::size_t{2} << 20;
// The smallest block that takes huge pages.
inline constexpr std::size_t kHugePageFrom = std::size_t{128} << 10;

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePageFrom) return static_cast<T*>(::operator new(bytes));
    const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = ::operator new(rounded, std::align_val_t{kHugePage});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    ::madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without it, 4 KiB pages
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePageFrom) {
      ::operator delete(p);
      return;
    }
    ::operator delete(p, std::align_val_t{kHugePage});
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace vramsim
