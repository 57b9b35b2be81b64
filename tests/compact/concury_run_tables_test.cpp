// Concury's data plane keeps each VIP's Dcode -> DIP row as its runs (compact/dcode_runs.hpp) and must
// answer exactly as the row would: for every key the same Dcode (the Othello's value, read here by a
// plain OthelloLookup of the image) and the DIP of the row's entry for that Dcode, in single lookups and
// in bulk on both paths (scalar, and AVX2 where the CPU has it), for rows of 1 to 4 096 runs, one run
// per DIP (the control plane's rows) or DIPs coming back in several runs, at Dcode widths 5 to 16. The
// image it gives back is the row it was given; rewrites in place and beyond a VIP's run capacity keep
// the answers exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <deque>
#include <numeric>
#include <random>
#include <set>

#include "flowtrack/compact/concury_control.hpp"
#include "flowtrack/compact/dcode_runs.hpp"
#include "support/compact_cases.hpp"

namespace flowtrack::compact {
namespace {

using testing::compact_key;

// A row of 2^dcode_bits entries with exactly min(runs, 2^dcode_bits) runs at random places. `one_run_each`:
// every run its own DIP (as the control plane's rows are); else DIPs from a pool of five come back in
// several runs (neighbours differ). DIPs span the whole 16 bits, 0xffff included.
std::vector<std::uint16_t> row_with_runs(unsigned dcode_bits, std::size_t runs, bool one_run_each, std::mt19937_64& rng) {
  const std::size_t dcodes = std::size_t{1} << dcode_bits;
  runs = std::min(runs, dcodes);
  std::vector<std::size_t> starts(dcodes - 1);
  std::iota(starts.begin(), starts.end(), 1);
  std::shuffle(starts.begin(), starts.end(), rng);
  starts.resize(runs - 1);
  starts.push_back(0);
  std::sort(starts.begin(), starts.end());
  std::vector<std::uint16_t> dips;
  const std::vector<std::uint16_t> pool{0, 7, 300, 0x8001, 0xffff};
  std::set<std::uint16_t> used;
  while (dips.size() < runs) {
    const auto dip = static_cast<std::uint16_t>(one_run_each ? rng() : pool[rng() % pool.size()]);
    if (one_run_each ? used.insert(dip).second : dips.empty() || dips.back() != dip) dips.push_back(dip);
  }
  std::vector<std::uint16_t> row(dcodes);
  for (std::size_t r = 0; r < runs; ++r) {
    const std::size_t end = r + 1 < runs ? starts[r + 1] : dcodes;
    std::fill(row.begin() + static_cast<std::ptrdiff_t>(starts[r]), row.begin() + static_cast<std::ptrdiff_t>(end), dips[r]);
  }
  return row;
}

constexpr std::size_t kRunCounts[] = {1, 2, 32, 100, 4096};

class ConcuryRunTables : public ::testing::TestWithParam<unsigned> {};

TEST_P(ConcuryRunTables, EveryDcodeOfARowFindsItsDipInTheRuns) {
  const unsigned dcode_bits = GetParam();
  std::mt19937_64 rng(dcode_bits);
  for (const std::size_t runs : kRunCounts) {
    for (const bool one_run_each : {true, false}) {
      const std::vector<std::uint16_t> row = row_with_runs(dcode_bits, runs, one_run_each, rng);
      const DcodeRuns table(row);
      ASSERT_EQ(DcodeRuns::runs_in(row), std::min(runs, row.size()));
      ASSERT_EQ(table.capacity(), std::bit_ceil(DcodeRuns::runs_in(row)));
      for (std::uint32_t d = 0; d < row.size(); ++d) ASSERT_EQ(DcodeRuns::dip_of(table.handle(), d), row[d]) << runs << " runs, Dcode " << d;
      ASSERT_EQ(table.row(), row);
    }
  }
}

TEST_P(ConcuryRunTables, LookupsGiveTheRowsDipAndTheOthellosDcodeBitForBit) {
  const unsigned dcode_bits = GetParam();
  ConcuryControl control(dcode_bits, 3);
  ConcuryLookup lookup(dcode_bits);
  std::mt19937_64 rng(100 + dcode_bits);
  std::vector<ConcuryVipImage> images;
  std::vector<LbQuery> queries;
  std::uint64_t next_key = 0;
  for (const std::size_t runs : kRunCounts) {
    for (const bool one_run_each : {true, false}) {
      constexpr std::uint32_t kConnections = 150;
      const std::uint32_t vip = control.add_vip({1, 2, 3}, {1, 1, 1}, kConnections + 1);
      for (std::uint32_t c = 0; c < kConnections; ++c) {
        queries.push_back({vip, compact_key<std::uint64_t>(next_key++)});
        control.learn(vip, queries.back().key, static_cast<std::uint32_t>(rng() & ((1u << dcode_bits) - 1)));
        queries.push_back({vip, rng()});  // and an unknown connection
      }
      images.push_back(control.image(vip));
      images.back().dips = row_with_runs(dcode_bits, runs, one_run_each, rng);
      ASSERT_EQ(lookup.add_vip(images.back()), vip);
    }
  }
  std::shuffle(queries.begin(), queries.end(), rng);
  // The reference: the image's Othello, then its row.
  std::deque<OthelloLookup> codes;
  for (const ConcuryVipImage& image : images) codes.emplace_back(image.codes);
  std::vector<std::uint32_t> dcodes(queries.size());
  std::vector<std::uint16_t> dips(queries.size());
  for (std::size_t i = 0; i < queries.size(); ++i) {
    dcodes[i] = static_cast<std::uint32_t>(codes[queries[i].vip].lookup(queries[i].key));
    dips[i] = images[queries[i].vip].dips[dcodes[i]];
  }

  for (std::size_t i = 0; i < queries.size(); ++i) {
    const ConcuryLookup::Answer single = lookup.answer(queries[i].vip, queries[i].key);
    ASSERT_EQ(single.dcode, dcodes[i]) << "query " << i;
    ASSERT_EQ(single.dip, dips[i]) << "query " << i;
  }
  std::vector<ConcuryLookup::BulkPath> paths{ConcuryLookup::BulkPath::scalar};
  if (ConcuryLookup::avx2_supported()) paths.push_back(ConcuryLookup::BulkPath::avx2);
  for (const ConcuryLookup::BulkPath path : paths) {
    lookup.set_bulk_path(path);
    std::vector<std::uint32_t> bulk_dcodes(queries.size());
    std::vector<std::uint16_t> bulk_dips(queries.size());
    // Bursts of 1 to 40 queries (chunks of 32 and a remainder, every length modulo 4).
    for (std::size_t at = 0, length = 1; at < queries.size(); at += length, length = length % 40 + 1) {
      const std::size_t n = std::min(length, queries.size() - at);
      lookup.lookup_bulk(std::span(queries).subspan(at, n), std::span(bulk_dips).subspan(at, n), std::span(bulk_dcodes).subspan(at, n));
    }
    EXPECT_EQ(bulk_dcodes, dcodes) << (path == ConcuryLookup::BulkPath::avx2 ? "AVX2" : "scalar");
    EXPECT_EQ(bulk_dips, dips) << (path == ConcuryLookup::BulkPath::avx2 ? "AVX2" : "scalar");
  }
  for (std::uint32_t v = 0; v < images.size(); ++v) EXPECT_TRUE(lookup.image(v) == images[v]) << "VIP " << v;
}

// One VIP's row rewritten to fewer runs (in place: the capacity stays), to as many as the capacity,
// then beyond it (new runs of a larger capacity), and back: every Dcode's DIP follows, bytes() with it.
TEST_P(ConcuryRunTables, RewritesInPlaceAndBeyondTheRunCapacityKeepEveryAnswer) {
  const unsigned dcode_bits = GetParam();
  ConcuryControl control(dcode_bits, 5);
  ConcuryLookup lookup(dcode_bits);
  std::mt19937_64 rng(200 + dcode_bits);
  const std::uint32_t vip = control.add_vip({1, 2, 3}, {1, 1, 1});
  std::vector<LbQuery> queries;
  for (std::uint64_t n = 0; n < 300; ++n) queries.push_back({vip, compact_key<std::uint64_t>(n)});
  ConcuryVipImage image = control.image(vip);
  image.dips = row_with_runs(dcode_bits, 32, true, rng);
  lookup.add_vip(image);
  const std::size_t bytes_at_32 = lookup.bytes();
  for (const std::size_t runs : {3u, 32u, 100u, 2u}) {
    image.dips = row_with_runs(dcode_bits, runs, false, rng);
    lookup.apply(vip, image);
    ASSERT_TRUE(lookup.image(vip) == image) << runs << " runs";
    std::vector<std::uint16_t> bulk(queries.size());
    lookup.lookup_bulk(queries, bulk);
    const OthelloLookup codes(image.codes);
    for (std::size_t i = 0; i < queries.size(); ++i) {
      ASSERT_EQ(bulk[i], image.dips[codes.lookup(queries[i].key)]) << runs << " runs";
      ASSERT_EQ(lookup.lookup(vip, queries[i].key), bulk[i]) << runs << " runs";
    }
  }
  // 100 runs outgrew the capacity of 32 (where the row fits 100 runs): 128 words since, 4 bytes each.
  if (dcode_bits >= 7) {
    EXPECT_EQ(lookup.bytes(), bytes_at_32 + (128 - 32) * sizeof(std::uint32_t));
  }
}

INSTANTIATE_TEST_SUITE_P(DcodeWidths, ConcuryRunTables, ::testing::Values(5u, 9u, 12u, 16u));

}  // namespace
}  // namespace flowtrack::compact
