#include <sys/mman.h>

#include <cstdint>
#include <new>

#include "flowtrack/table/huge_page_allocator.hpp"

namespace flowtrack {
namespace {

// The first multiple of kHugePageBytes at or above n: a length in whole huge pages, or an aligned address.
std::uintptr_t round_up_to_huge_page(std::uintptr_t n) { return (n + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes; }

}  // namespace

// mmap aligns to 4 KiB only: map one huge page more than needed, then give back the slack before the
// first aligned address and after the last page, so that every huge page of the array can be backed by
// one.
void* map_huge(std::size_t bytes) {
  const std::size_t length = round_up_to_huge_page(bytes);
  void* raw = mmap(nullptr, length + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = round_up_to_huge_page(start);
  if (aligned != start) munmap(raw, aligned - start);
  const std::uintptr_t end = start + length + kHugePageBytes;
  if (end != aligned + length) munmap(reinterpret_cast<void*>(aligned + length), end - (aligned + length));
  void* p = reinterpret_cast<void*>(aligned);
  madvise(p, length, MADV_HUGEPAGE);  // advice only: refused where huge pages are off, and harmless then
  return p;
}

void unmap_huge(void* p, std::size_t bytes) noexcept { munmap(p, round_up_to_huge_page(bytes)); }

}  // namespace flowtrack
