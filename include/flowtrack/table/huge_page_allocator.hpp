// Memory for the data plane's large arrays (table buckets, keys, connection records, timer links, the
// replay arena): an array of at least kHugePageBytes gets its own mapping, aligned to a huge page and
// advised MADV_HUGEPAGE, so that the kernel backs it with 2 MiB pages where transparent huge pages are
// enabled ("always" or "madvise"). At a million connections every packet touches a few lines spread
// over hundreds of megabytes; with 4 KiB pages each of them also misses the TLB, and under a hypervisor
// a TLB miss walks two page tables. DPDK's hugepage heaps and VPP's exist for the same reason.
// Smaller arrays come from the ordinary allocator. Where huge pages are off, the advice is a no-op and
// the memory is ordinary pages: nothing else changes.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace flowtrack {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

// A mapping of at least `bytes` (rounded up to whole huge pages), aligned to kHugePageBytes, zero
// filled, advised for huge pages. Throws std::bad_alloc when the system refuses it.
void* map_huge(std::size_t bytes);
// Gives back a mapping of map_huge(bytes), with the same `bytes`.
void unmap_huge(void* p, std::size_t bytes) noexcept;

// A standard allocator that takes arrays of kHugePageBytes and more from map_huge, the rest from
// std::allocator (the same size decides on both sides, so deallocate always finds the right one).
template <class T>
class HugePageAllocator {
 public:
  using value_type = T;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(std::size_t n) {
    if (!huge(n)) return std::allocator<T>{}.allocate(n);
    return static_cast<T*>(map_huge(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (!huge(n)) {
      std::allocator<T>{}.deallocate(p, n);
    } else {
      unmap_huge(p, n * sizeof(T));
    }
  }

  template <class U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }

 private:
  // The sanitizer trees keep every array on the ordinary heap, where ASan guards its bounds.
  static bool huge([[maybe_unused]] std::size_t n) {
#ifdef FLOWTRACK_SANITIZED
    return false;
#else
    return n >= kHugePageBytes / sizeof(T);
#endif
  }
};

// The data plane's large arrays: a vector whose buffer, once it is large, lies in huge pages.
template <class T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace flowtrack
