// Concury's bulk lookups give the single lookups' DIPs and Dcodes bit for bit, in the pairs layout on
// both of its bulk paths, scalar and AVX2 (compact/concury_lookup_avx2.cpp), and in the blocks layout
// (compact/dcode_blocks_lookup.cpp), for known and unknown connections of VIPs of every size (arrays
// from a handful of cells to thousands, so every reduce range and both packed-cell cases), at Dcode
// widths 12 (the hot path's constant) and others, in bursts of every length modulo 4 (the AVX2 path's
// scalar tail); at width 12 with a VIP of 150K connections too (release tree), whose half a MiB of
// cells makes the bulk paths prefetch wherever the L2 is at most 1 MiB (prefetch_policy.hpp).
#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "flowtrack/compact/concury_control.hpp"
#include "flowtrack/compact/internal/prefetch_policy.hpp"
#include "support/compact_cases.hpp"

namespace flowtrack::compact {
namespace {

using testing::compact_key;

class ConcuryBulkPaths : public ::testing::TestWithParam<std::tuple<unsigned, ConcuryLayout>> {};

TEST_P(ConcuryBulkPaths, EveryBulkPathGivesTheSingleLookupsDipsAndDcodes) {
  const auto [dcode_bits, layout] = GetParam();
  const bool pairs = layout == ConcuryLayout::pairs;
  if (pairs && !ConcuryLookup::avx2_supported()) GTEST_SKIP() << "no AVX2 on this CPU";
  ConcuryControl control(dcode_bits, 7, layout);
  ConcuryLookup lookup(dcode_bits, layout);
  std::mt19937_64 rng(dcode_bits);
  std::vector<LbQuery> queries;
  std::uint64_t next_key = 0;
  std::vector<std::uint32_t> vip_sizes{0, 1, 3, 17, 100, 613, 2500};
#ifndef FLOWTRACK_SANITIZED
  // The release tree's: a bad access in these loops shows on the small VIPs too, at a fraction of the
  // sanitizer trees' cost.
  if (dcode_bits == 12) vip_sizes.push_back(150'000);
#endif
  for (const std::uint32_t connections : vip_sizes) {
    std::vector<std::uint16_t> dips;
    for (std::uint16_t d = 0; d < 5; ++d) dips.push_back(static_cast<std::uint16_t>(100 * lookup.vips() + d));
    const std::uint32_t vip = control.add_vip(dips, {1, 2, 3, 1, 1}, connections + 1);
    for (std::uint32_t c = 0; c < connections; ++c) {
      const std::uint64_t key = compact_key<std::uint64_t>(next_key++);
      control.learn(vip, key, static_cast<std::uint32_t>(rng() & ((1u << dcode_bits) - 1)));
      queries.push_back({vip, key});
    }
    lookup.add_vip(control.image(vip));
  }
  // As many unknown connections, spread over the VIPs; then all of them in a shuffled order.
  for (std::size_t n = queries.size(); n-- > 0;) {
    queries.push_back({static_cast<std::uint32_t>(rng() % lookup.vips()), rng()});
  }
  std::shuffle(queries.begin(), queries.end(), rng);

  std::vector<std::uint16_t> scalar_dips(queries.size()), avx2_dips(queries.size());
  std::vector<std::uint32_t> scalar_codes(queries.size()), avx2_codes(queries.size());
  // Bursts of 1 to 40 queries (chunks of 32 and a remainder, every length modulo 4).
  for (std::size_t at = 0, length = 1; at < queries.size(); at += length, length = length % 40 + 1) {
    const std::size_t n = std::min(length, queries.size() - at);
    const auto burst = std::span(queries).subspan(at, n);
    if (pairs) lookup.set_bulk_path(ConcuryLookup::BulkPath::scalar);
    lookup.lookup_bulk(burst, std::span(scalar_dips).subspan(at, n), std::span(scalar_codes).subspan(at, n));
    if (pairs) lookup.set_bulk_path(ConcuryLookup::BulkPath::avx2);
    lookup.lookup_bulk(burst, std::span(avx2_dips).subspan(at, n), std::span(avx2_codes).subspan(at, n));
  }
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const ConcuryLookup::Answer single = lookup.answer(queries[i].vip, queries[i].key);
    ASSERT_EQ(scalar_codes[i], single.dcode) << "query " << i;
    ASSERT_EQ(scalar_dips[i], single.dip) << "query " << i;
    ASSERT_EQ(avx2_codes[i], single.dcode) << "query " << i << ", VIP " << queries[i].vip;
    ASSERT_EQ(avx2_dips[i], single.dip) << "query " << i << ", VIP " << queries[i].vip;
  }
}

INSTANTIATE_TEST_SUITE_P(DcodeWidths, ConcuryBulkPaths,
                         ::testing::Combine(::testing::Values(12u, 5u, 9u, 16u),
                                            ::testing::Values(ConcuryLayout::pairs, ConcuryLayout::blocks)));

TEST(PrefetchPolicy, NeverForArraysOfAFewLinesAlwaysForAGibibyte) {
  EXPECT_FALSE(prefetch_pays(0));
  EXPECT_FALSE(prefetch_pays(4096));
  EXPECT_TRUE(prefetch_pays(std::size_t{1} << 30));
}

}  // namespace
}  // namespace flowtrack::compact
