// The data plane's large arrays (huge_page_allocator.hpp): a mapping starts on a huge-page boundary and
// is zero filled and writable to its end; a vector keeps its contents while it grows past the huge-page
// threshold and shrinks back under it (each buffer goes back to the allocator that gave it: in the
// release tree a mapping handed to free(), or a heap block to munmap, would crash; the sanitizer trees
// keep every array on the heap, so there the vector test checks the heap path alone).
#include "flowtrack/table/huge_page_allocator.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>

namespace flowtrack {
namespace {

TEST(HugePages, AMappingStartsOnAHugePageBoundaryZeroFilledAndWritableToItsEnd) {
  const std::size_t bytes = kHugePageBytes + 12345;  // rounds up to two huge pages
  auto* p = static_cast<std::uint8_t*>(map_huge(bytes));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % kHugePageBytes, 0u);
  for (std::size_t at = 0; at < 2 * kHugePageBytes; at += 4096) EXPECT_EQ(p[at], 0) << at;
  std::memset(p, 0xab, 2 * kHugePageBytes);
  EXPECT_EQ(p[2 * kHugePageBytes - 1], 0xab);
  unmap_huge(p, bytes);
}

TEST(HugePages, AVectorKeepsItsContentsAcrossTheThresholdBothWays) {
  HugePageVector<std::uint32_t> values(1000);
  std::iota(values.begin(), values.end(), 0u);
  const std::size_t large = 3 * kHugePageBytes / sizeof(std::uint32_t);
  values.resize(large);
  ASSERT_EQ(values.size(), large);
  for (std::uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(values[i], i);
  EXPECT_EQ(values[large - 1], 0u);  // value-initialised, as std::vector's
  values.resize(10);
  values.shrink_to_fit();
  for (std::uint32_t i = 0; i < 10; ++i) EXPECT_EQ(values[i], i);
}

}  // namespace
}  // namespace flowtrack
