// Dcode blocks (compact/dcode_blocks*.hpp): every known key gets its Dcode, by single and bulk lookups,
// with and without bumping; an unknown key's Dcode is stable while the image is unchanged, uniform,
// and kept by a rebuild outside the blocks it changes; no lookup reads outside its line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <span>
#include <vector>

#include "flowtrack/compact/dcode_blocks_builder.hpp"
#include "flowtrack/compact/dcode_blocks_lookup.hpp"
#include "flowtrack/util/random.hpp"
#include "support/compact_cases.hpp"

namespace flowtrack::compact {
namespace {

using testing::compact_key;

constexpr std::uint64_t kVipSeed = 77, kFillSeed = 5;
constexpr std::uint64_t kUnknownBase = 1'000'000'000;  // compact_key numbers of keys never stored

std::vector<DcodePair> random_pairs(std::size_t n, unsigned dcode_bits, std::uint64_t seed, std::uint64_t first = 0) {
  Random rng(seed);
  std::vector<DcodePair> pairs(n);
  for (std::size_t i = 0; i < n; ++i) {
    pairs[i] = {compact_key<std::uint64_t>(first + i), static_cast<std::uint32_t>(rng.below(std::uint64_t{1} << dcode_bits))};
  }
  return pairs;
}

// Every pair's Dcode from the image itself, the lookup structure's single lookups, and its bulk lookups
// in bursts of every length 1..40 in turn; the queries alternate between the VIP and a second one.
void expect_every_known_key(const DcodeBlocksImage& image, std::span<const DcodePair> pairs) {
  DcodeBlocksLookup lookup(image.dcode_bits);
  const std::vector<DcodePair> other = random_pairs(300, image.dcode_bits, 9, kUnknownBase * 2);
  const std::uint32_t other_vip = lookup.add_vip(build_dcode_blocks(other, dcode_blocks_for(other.size(), image.dcode_bits),
                                                                    image.dcode_bits, kVipSeed + 1, kFillSeed));
  const std::uint32_t vip = lookup.add_vip(image);
  std::vector<LbQuery> queries;
  std::vector<std::uint32_t> expected;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    ASSERT_EQ(image.lookup(pairs[i].key), pairs[i].dcode) << "key " << i;
    ASSERT_EQ(lookup.lookup(vip, pairs[i].key), pairs[i].dcode) << "key " << i;
    queries.push_back({vip, pairs[i].key});
    expected.push_back(pairs[i].dcode);
    const DcodePair& o = other[i % other.size()];
    queries.push_back({other_vip, o.key});
    expected.push_back(o.dcode);
  }
  std::vector<std::uint32_t> got(queries.size(), ~0u);
  for (std::size_t from = 0, burst = 1; from < queries.size(); from += burst, burst = burst % 40 + 1) {
    const std::size_t n = std::min(burst, queries.size() - from);
    lookup.lookup_bulk(std::span(queries).subspan(from, n), std::span(got).subspan(from, n));
  }
  ASSERT_EQ(got, expected);
}

TEST(DcodeBlocks, EveryKnownKeyGetsItsDcodeSingleAndBulk) {
  for (const unsigned bits : {12u, 1u, 5u, 16u, 24u}) {
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{17}, std::size_t{1000}, std::size_t{200'000}}) {
      if (bits != 12 && n > 20'000) continue;  // the other widths up to 1000 keys and 20K below
      SCOPED_TRACE(::testing::Message() << bits << " bits, " << n << " keys");
      const std::vector<DcodePair> pairs = random_pairs(n, bits, n + bits);
      const DcodeBlocksImage image = build_dcode_blocks(pairs, dcode_blocks_for(n, bits), bits, kVipSeed, kFillSeed);
      expect_every_known_key(image, pairs);
    }
  }
  for (const unsigned bits : {3u, 8u, 20u}) {
    const std::vector<DcodePair> pairs = random_pairs(20'000, bits, bits);
    expect_every_known_key(build_dcode_blocks(pairs, dcode_blocks_for(pairs.size(), bits), bits, kVipSeed, kFillSeed), pairs);
  }
}

TEST(DcodeBlocks, ForcedBumpingStillAnswersEveryKnownKeyExactly) {
  // About 40 keys a block (41 cells) and then all keys in one block: most keys cannot be in a forest.
  for (const std::uint32_t nblocks : {100u, 1u}) {
    const std::vector<DcodePair> pairs = random_pairs(4000, 12, nblocks);
    const DcodeBlocksImage image = build_dcode_blocks(pairs, nblocks, 12, kVipSeed, kFillSeed);
    EXPECT_GT(image.flagged_blocks(), 0u);
    EXPECT_GT(image.bumped(), pairs.size() / 20);
    EXPECT_LE(2 * image.bumped(), image.overflow.size());
    expect_every_known_key(image, pairs);
  }
}

TEST(DcodeBlocks, AnUnknownKeysDcodeIsStableWhileTheImageIsUnchanged) {
  const std::vector<DcodePair> pairs = random_pairs(50'000, 12, 1);
  const DcodeBlocksImage image = build_dcode_blocks(pairs, dcode_blocks_for(pairs.size(), 12), 12, kVipSeed, kFillSeed);
  DcodeBlocksLookup lookup;
  const std::uint32_t vip = lookup.add_vip(image);
  std::vector<LbQuery> queries;
  for (std::uint64_t u = 0; u < 10'000; ++u) queries.push_back({vip, compact_key<std::uint64_t>(kUnknownBase + u)});
  std::vector<std::uint32_t> first(queries.size()), again(queries.size());
  lookup.lookup_bulk(queries, first);
  lookup.apply(vip, image);  // the same image copied in place
  lookup.lookup_bulk(queries, again);
  EXPECT_EQ(first, again);
  for (std::size_t i = 0; i < queries.size(); ++i) {
    ASSERT_EQ(lookup.lookup(vip, queries[i].key), first[i]);
    ASSERT_EQ(image.lookup(queries[i].key), first[i]);
  }
}

// The blocks of the keys in `changed`.
std::set<std::uint32_t> blocks_of(const DcodeBlocksImage& image, std::span<const DcodePair> changed) {
  std::set<std::uint32_t> blocks;
  for (const DcodePair& p : changed) blocks.insert(dcode_block_of(seeded_hash(p.key, image.seed), image.nblocks()));
  return blocks;
}

TEST(DcodeBlocks, RebuildKeepsUntouchedBlocksBitIdenticalAndTheirUnknownKeysDcodes) {
  // At the default load, and with forced bumping (flagged blocks kept with their overflow keys).
  for (const double cells_per_key : {kDcodeCellsPerKey, 1.2}) {
    SCOPED_TRACE(cells_per_key);
    std::vector<DcodePair> pairs = random_pairs(30'000, 12, 3);
    const DcodeBlocksImage in_use =
        build_dcode_blocks(pairs, dcode_blocks_for(pairs.size(), 12, cells_per_key), 12, kVipSeed, kFillSeed);
    std::vector<DcodePair> changed;
    for (std::size_t i = 0; i < pairs.size(); i += 3001) {
      pairs[i].dcode ^= 0x5a5;
      changed.push_back(pairs[i]);
    }
    const DcodeBlocksImage rebuilt = rebuild_dcode_blocks(in_use, pairs);
    ASSERT_TRUE(rebuilt.same_geometry(in_use));
    const std::set<std::uint32_t> touched = blocks_of(in_use, changed);
    std::size_t kept = 0;
    for (std::uint32_t b = 0; b < in_use.nblocks(); ++b) {
      if (touched.count(b) == 0) {
        ASSERT_EQ(rebuilt.lines[b], in_use.lines[b]) << "block " << b;
        ++kept;
      }
    }
    EXPECT_GE(kept, in_use.nblocks() - changed.size());
    // Unknown keys of the blocks solved again keep their Dcodes too, unless a cell of theirs lies in a
    // tree whose edges changed (the seed in use still fits: the graph is the same).
    std::size_t in_touched = 0, kept_in_touched = 0;
    for (std::uint64_t u = 0; u < 20'000; ++u) {
      const std::uint64_t key = compact_key<std::uint64_t>(kUnknownBase + u);
      if (touched.count(dcode_block_of(seeded_hash(key, in_use.seed), in_use.nblocks())) == 0) {
        ASSERT_EQ(rebuilt.lookup(key), in_use.lookup(key)) << "unknown key " << u;
      } else {
        ++in_touched;
        kept_in_touched += rebuilt.lookup(key) == in_use.lookup(key) ? 1 : 0;
      }
    }
    EXPECT_GT(2 * kept_in_touched, in_touched);
    // Copied in place over the image in use, the rebuild answers every key with its new Dcode.
    DcodeBlocksLookup lookup;
    const std::uint32_t vip = lookup.add_vip(in_use);
    lookup.apply(vip, rebuilt);
    EXPECT_EQ(lookup.image(vip), rebuilt);
    for (const DcodePair& p : pairs) ASSERT_EQ(lookup.lookup(vip, p.key), p.dcode);
  }
}

TEST(DcodeBlocks, RebuildAfterConnectionsEndAndNewOnesAreLearntKeepsEveryBlock) {
  // A connection learnt with the Dcode the image gave it is answered by its block already, and one that
  // ended leaves every other key's answer: no block needs solving again.
  std::vector<DcodePair> pairs = random_pairs(20'000, 12, 8);
  const DcodeBlocksImage in_use = build_dcode_blocks(pairs, dcode_blocks_for(pairs.size(), 12), 12, kVipSeed, kFillSeed);
  pairs.resize(pairs.size() - 500);
  for (std::uint64_t n = 0; n < 500; ++n) {
    const std::uint64_t key = compact_key<std::uint64_t>(kUnknownBase * 3 + n);
    pairs.push_back({key, in_use.lookup(key)});
  }
  const DcodeBlocksImage rebuilt = rebuild_dcode_blocks(in_use, pairs);
  EXPECT_TRUE(rebuilt.lines == in_use.lines);
  for (const DcodePair& p : pairs) ASSERT_EQ(rebuilt.lookup(p.key), p.dcode);
}

// Chi-squared of counts against equal shares.
double chi_squared(const std::vector<double>& counts, double total) {
  const double expected = total / static_cast<double>(counts.size());
  double chi2 = 0;
  for (const double c : counts) chi2 += (c - expected) * (c - expected) / expected;
  return chi2;
}

TEST(DcodeBlocks, UnknownKeysDcodesAreUniformEvenWhenEveryKnownKeyHasOneDcode) {
  // Full load (the default blocks), and every known key with Dcode 0: an unknown key whose cells lie in
  // one tree would get 0 from its cells alone; its own bits must make its Dcode uniform anyway.
  constexpr unsigned kBits = 12;
  constexpr std::size_t kUnknown = 400'000;
  for (const bool all_zero : {true, false}) {
    SCOPED_TRACE(all_zero ? "known Dcodes 0" : "known Dcodes random");
    std::vector<DcodePair> pairs = random_pairs(100'000, kBits, 4);
    if (all_zero) {
      for (DcodePair& p : pairs) p.dcode = 0;
    }
    const DcodeBlocksImage image = build_dcode_blocks(pairs, dcode_blocks_for(pairs.size(), kBits), kBits, kVipSeed, kFillSeed);
    std::vector<double> codes(std::size_t{1} << kBits, 0), top(16, 0);
    for (std::uint64_t u = 0; u < kUnknown; ++u) {
      const std::uint32_t code = image.lookup(compact_key<std::uint64_t>(kUnknownBase + u));
      ++codes[code];
      ++top[code >> (kBits - 4)];
    }
    // The p = 0.001 critical values: 37.70 for 15 degrees of freedom; for 4095, 4380 (Wilson-Hilferty:
    // 4095 (1 - 2/(9*4095) + 3.090 sqrt(2/(9*4095)))^3).
    EXPECT_LT(chi_squared(top, kUnknown), 37.70);
    EXPECT_LT(chi_squared(codes, kUnknown), 4380.0);
  }
}

TEST(DcodeBlocks, NoCellReadLeavesItsLine) {
  // Every cell of every width: its load starts in the line, ends in it, and holds the cell's bits.
  for (unsigned bits = 1; bits <= 24; ++bits) {
    const DcodeGeometry g(bits);
    ASSERT_GE(g.half_a, 1u);
    ASSERT_GE(g.half_b, g.half_a);
    ASSERT_LE(g.half_b, g.half_a + 1);
    ASSERT_LE(g.first_bit(g.cells() - 1) + bits, kDcodeLineBits);
    for (unsigned c = 0; c < g.cells(); ++c) {
      const DcodeCellLoad at = g.load_of(c);
      ASSERT_GE(g.first_bit(c), kDcodeHeaderBits);
      ASSERT_LE(at.byte + 8, kDcodeLineBits / 8) << bits << " bits, cell " << c;  // the load ends in the line
      ASSERT_EQ(8 * at.byte + at.shift, g.first_bit(c));                          // and starts at or before the cell
      ASSERT_LE(at.shift + bits, 64u) << bits << " bits, cell " << c;              // whose bits it holds
    }
  }
}

TEST(DcodeBlocks, LinesAreCacheLinesAndMemoryFollowsTheBlocks) {
  static_assert(sizeof(DcodeLine) == 64 && alignof(DcodeLine) == 64);
  const std::vector<DcodePair> pairs = random_pairs(100'000, 12, 6);
  const DcodeBlocksImage image = build_dcode_blocks(pairs, dcode_blocks_for(pairs.size(), 12), 12, kVipSeed, kFillSeed);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(image.lines.data()) % 64, 0u);
  EXPECT_EQ(image.bytes(), image.nblocks() * 64 + image.overflow.size() * sizeof(DcodeOverflowSlot));
  // 41 cells a block at 2.0 cells a key: 20.5 keys a block, 25.0 bits a key before the overflow table.
  EXPECT_EQ(image.nblocks(), dcode_blocks_for(pairs.size(), 12));
  EXPECT_NEAR(static_cast<double>(image.nblocks()) * 512 / static_cast<double>(pairs.size()), 25.0, 0.1);
}

}  // namespace
}  // namespace flowtrack::compact
