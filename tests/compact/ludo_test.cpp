// Ludo's own paths: the fallback table when a cuckoo insertion fails, the overflow-seed table, seeds
// that separate every bucket's keys, and growing and shrinking with the load.
#include <gtest/gtest.h>

#include "support/compact_cases.hpp"

namespace flowtrack::compact {
namespace {

using testing::compact_key;

template <class Key>
void expect_all(const LudoBuilder<Key>& b, const LudoLookup<Key>& lookup, std::uint64_t first, std::uint64_t last) {
  for (std::uint64_t n = first; n < last; ++n) {
    ASSERT_EQ(b.value_of(compact_key<Key>(n)), n & 0xff) << n;
    ASSERT_EQ(lookup.lookup(compact_key<Key>(n)), n & 0xff) << n;
  }
}

TEST(Ludo, FallbackTableAnswersKeysWhoseCuckooInsertionFailed) {
  LudoConfig c;
  c.capacity = 256;
  c.max_load = 1.0;
  c.displace = false;  // no cuckoo paths: a key meeting two full buckets fails at once
  LudoBuilder<FlowKeyV4> b(c);
  LudoLookup<FlowKeyV4> lookup(b.export_image());
  std::uint64_t n = 0;
  while (b.fallback_size() < 5 && n < 250) {
    lookup.apply(b.insert(compact_key<FlowKeyV4>(n), n & 0xff));
    ++n;
  }
  ASSERT_GE(b.fallback_size(), 5u);
  expect_all(b, lookup, 0, n);
  EXPECT_TRUE(lookup.image() == b.export_image());
  for (std::uint64_t k = 0; k < n; k += 3) lookup.apply(b.erase(compact_key<FlowKeyV4>(k)));
  for (std::uint64_t k = 1; k < n; k += 3) ASSERT_EQ(lookup.lookup(compact_key<FlowKeyV4>(k)), k & 0xff);
}

// 2-bit seeds: only seeds 0..2 fit in a bucket, so many full buckets overflow to the overflow table.
TEST(Ludo, OverflowSeedTableServesBucketsWhoseSeedDoesNotFit) {
  LudoConfig c;
  c.capacity = 4000;
  c.seed_bits = 2;
  LudoBuilder<std::uint64_t> b(c);
  LudoLookup<std::uint64_t> lookup(b.export_image());
  for (std::uint64_t n = 0; n < 3800; ++n) lookup.apply(b.insert(compact_key<std::uint64_t>(n), n & 0xff));
  EXPECT_GT(b.overflowing_buckets(), b.buckets() / 4);
  expect_all(b, lookup, 0, 3800);
  EXPECT_TRUE(b.seeds_valid());
  EXPECT_TRUE(lookup.image() == b.export_image());
}

// An overflow entry names its bucket exactly whatever the table's size: 64M keys at load 0.95 take
// 17.7M buckets, past the 2^24 that 32-bit entries held beside an 8-bit seed.
TEST(Ludo, AnOverflowEntryNamesItsBucketInTablesBeyondTwoToThe24Buckets) {
  for (const std::uint32_t bucket : {0u, (1u << 24) - 2, (1u << 24) - 1, 1u << 24, 17'660'000u, 0xffff'fffeu}) {
    for (const std::uint32_t seed : {0u, 31u, 255u}) {
      const LudoOverflowEntry entry = overflow_entry(bucket, seed);
      EXPECT_NE(entry, 0u) << bucket;  // 0 is a free slot
      EXPECT_EQ(overflow_bucket(entry), bucket);
      EXPECT_EQ(entry & 0xff, seed);
    }
  }
}

TEST(Ludo, GrowsAndShrinksWithTheLoadAndKeepsEveryValue) {
  LudoConfig c;
  c.capacity = 64;
  LudoBuilder<std::uint64_t> b(c);
  LudoLookup<std::uint64_t> lookup(b.export_image());
  const std::uint32_t first_buckets = b.buckets();
  for (std::uint64_t n = 0; n < 3000; ++n) lookup.apply(b.insert(compact_key<std::uint64_t>(n), n & 0xff));
  const std::uint32_t grown = b.buckets();
  EXPECT_GT(grown, first_buckets * 16);
  EXPECT_LE(b.load(), 0.95);
  for (std::uint64_t n = 0; n < 2900; ++n) lookup.apply(b.erase(compact_key<std::uint64_t>(n)));
  EXPECT_LT(b.buckets(), grown / 4);
  EXPECT_GE(b.load(), 0.2);
  expect_all(b, lookup, 2900, 3000);
  EXPECT_TRUE(b.seeds_valid());
}

}  // namespace
}  // namespace flowtrack::compact
