#include <sys/mman.h>

#include <cstdint>
#include <new>

#include "flowtrack/table/huge_page_allocator.hpp"

namespace flowtrack {
namespace {

std::size_t whole_huge_pages(std::size_t bytes) { return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes; }

}  // namespace

// mmap aligns to 4 KiB only: map one huge page more than needed, then give back the slack before the
// first aligned address and after the last page, so that every huge page of the array can be backed by
// one.
void* map_huge(std::size_t bytes) {
  const std::size_t length = whole_huge_pages(bytes);
  void* raw = mmap(nullptr, length + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (aligned != start) munmap(raw, aligned - start);
  const std::uintptr_t end = start + length + kHugePageBytes;
  if (end != aligned + length) munmap(reinterpret_cast<void*>(aligned + length), end - (aligned + length));
  void* p = reinterpret_cast<void*>(aligned);
  madvise(p, length, MADV_HUGEPAGE);  // advice only: refused where huge pages are off, and harmless then
  return p;
}

void unmap_huge(void* p, std::size_t bytes) noexcept { munmap(p, whole_huge_pages(bytes)); }

}  // namespace flowtrack
