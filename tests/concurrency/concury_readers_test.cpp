// Concury's lookup structure keeps the single-writer / many-readers promise across rewrites: reader
// threads looking up known connections, in bulk and one at a time, always get each connection's DIP,
// never one of a half-copied rewrite, while the writer changes a VIP's weights over and over (each
// change moves known connections to other Dcodes of their DIP's range, so the arrays and the row
// change) and copies every new image in place. Both layouts of the arrays, and in the pairs layout both
// bulk paths (scalar, and AVX2 where the CPU has it).
// Runs under ThreadSanitizer in `make test`.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <tuple>
#include <vector>

#include "flowtrack/compact/concury_control.hpp"
#include "flowtrack/hash/seeded_hash.hpp"

namespace flowtrack::compact {
namespace {

class ConcuryReaders : public ::testing::TestWithParam<std::tuple<ConcuryLayout, ConcuryLookup::BulkPath>> {};

TEST_P(ConcuryReaders, KnownConnectionsKeepTheirDipInBulkAndSingleLookupsWhileRewritesAreCopiedIn) {
  const auto [layout, path] = GetParam();
  if (path == ConcuryLookup::BulkPath::avx2 && !ConcuryLookup::avx2_supported()) GTEST_SKIP() << "no AVX2";
  constexpr std::uint32_t kVips = 2, kDips = 8, kConnections = 400;
  ConcuryControl control(12, 1, layout);
  ConcuryLookup lookup(12, layout);
  lookup.set_bulk_path(path);
  std::vector<std::uint16_t> dips[kVips];
  for (std::uint32_t v = 0; v < kVips; ++v) {
    for (std::uint16_t d = 0; d < kDips; ++d) dips[v].push_back(static_cast<std::uint16_t>(100 * (v + 1) + d));
    control.add_vip(dips[v], std::vector<double>(kDips, 1.0));
    lookup.add_vip(control.image(v));
  }
  std::vector<LbQuery> known;
  std::vector<std::uint16_t> expected;
  for (std::uint64_t n = 0; n < kConnections; ++n) {
    const LbQuery q{static_cast<std::uint32_t>(n % kVips), seeded_hash(n, 5)};
    control.learn(q.vip, q.key, lookup.answer(q.vip, q.key).dcode);
    known.push_back(q);
    expected.push_back(lookup.answer(q.vip, q.key).dip);
  }

  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> wrong{0}, reads{0};
  auto reader = [&] {
    std::vector<std::uint16_t> got(known.size());
    while (!stop.load(std::memory_order_acquire)) {
      lookup.lookup_bulk(known, got);
      for (std::size_t i = 0; i < known.size(); ++i) {
        if (got[i] != expected[i]) wrong.fetch_add(1, std::memory_order_relaxed);
        if (lookup.lookup(known[i].vip, known[i].key) != expected[i]) wrong.fetch_add(1, std::memory_order_relaxed);
      }
      reads.fetch_add(2 * known.size(), std::memory_order_relaxed);
    }
  };
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) readers.emplace_back(reader);

  // Weights of VIP 0 swing between even and skewed: every change moves some known connections' Dcodes.
  constexpr int kRewrites = 200;
  for (int i = 0; i < kRewrites; ++i) {
    std::vector<double> weights(kDips, 1.0);
    if (i % 2 == 0) weights[static_cast<std::size_t>(i / 2) % kDips] = 3.0;
    ASSERT_EQ(control.set_pool(0, dips[0], weights), 0u);
    const ConcuryVipImage in_use = lookup.image(0);
    lookup.apply(0, control.image(0, &in_use));
  }
  while (reads.load(std::memory_order_relaxed) < 8 * known.size()) std::this_thread::yield();
  stop.store(true, std::memory_order_release);
  for (auto& t : readers) t.join();
  EXPECT_EQ(wrong.load(), 0u);
}

INSTANTIATE_TEST_SUITE_P(LayoutsAndBulkPaths, ConcuryReaders,
                         ::testing::Values(std::make_tuple(ConcuryLayout::pairs, ConcuryLookup::BulkPath::scalar),
                                           std::make_tuple(ConcuryLayout::pairs, ConcuryLookup::BulkPath::avx2),
                                           std::make_tuple(ConcuryLayout::blocks, ConcuryLookup::BulkPath::scalar)));

}  // namespace
}  // namespace flowtrack::compact
