// Cuckoo++'s lazy expiry at the table level: an entry whose deadline has come is invisible to every
// read, its slot and id go to the next insert that needs them, and 16-bit stamps stay right across
// wrap-around as long as the sweep keeps its promise. Driven directly through set_clock / set_deadline /
// reclaim_expired with 1 ns stamp units, so the stamps wrap every 65.5 us of fake time.
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/table/cuckoo_pp.hpp"

namespace flowtrack {
namespace {

using Table = CuckooPPTable<FlowKeyV4>;
constexpr unsigned kNanosecondStamps = 0;

FlowKeyV4 key(std::uint32_t n) {
  return FlowKeyV4::from_host(0x0a000000u + n * 2654435761u, 0xc6120001u, static_cast<std::uint16_t>(n), 443,
                              ipproto::kTcp);
}

FlowId insert_with_deadline(Table& table, std::uint32_t n, std::uint64_t deadline) {
  const InsertResult r = table.insert(key(n), flow_hash(key(n)));
  EXPECT_TRUE(r.is_new());
  table.set_deadline(r.id, deadline);
  return r.id;
}

TEST(LazyExpiry, WithoutExpiryEntriesNeverExpireHoweverTheClockMoves) {
  Table table(64, kNanosecondStamps);
  const FlowId id = table.insert(key(1), flow_hash(key(1))).id;
  table.set_clock(1'000'000'000);
  EXPECT_EQ(table.find(key(1), flow_hash(key(1))), id);
}

TEST(LazyExpiry, AnEntryIsVisibleUntilItsDeadlineAndInvisibleFromIt) {
  Table table(64, kNanosecondStamps);
  table.enable_expiry(1000);
  const FlowId id = insert_with_deadline(table, 1, 1500);
  const std::uint32_t hash = flow_hash(key(1));
  table.set_clock(1499);
  EXPECT_EQ(table.find(key(1), hash), id);

  table.set_clock(1500);
  EXPECT_EQ(table.find(key(1), hash), kNoFlow);
  std::array<FlowId, 1> ids{};
  const std::array<FlowKeyV4, 1> keys{key(1)};
  const std::array<std::uint32_t, 1> hashes{hash};
  EXPECT_EQ(table.find_bulk(keys, hashes, ids), 0u);
  EXPECT_EQ(ids[0], kNoFlow);
  EXPECT_FALSE(table.erase(key(1), hash));
  std::size_t shown = 0;
  for_each_flow(table, [&](const FlowKeyV4&, FlowId) { ++shown; });
  EXPECT_EQ(shown, 0u);
  EXPECT_EQ(table.size(), 1u) << "an expired entry holds its id until it is reclaimed";
}

TEST(LazyExpiry, ReclaimReportsEachExpiredEntryOnceAndFreesItsId) {
  Table table(256, kNanosecondStamps);
  table.enable_expiry(0);
  std::vector<FlowId> early, late;
  for (std::uint32_t n = 0; n < 100; ++n) (n % 2 == 0 ? early : late).push_back(insert_with_deadline(table, n, n % 2 == 0 ? 100 : 10'000));
  table.set_clock(5000);
  std::vector<int> reported(table.capacity(), 0);
  std::size_t cursor = 0;
  const auto [finished, reclaimed] =
      table.reclaim_expired(cursor, table.bucket_count(), ~std::size_t{0}, [&](FlowId id) { ++reported[id]; });
  EXPECT_EQ(finished, table.bucket_count());
  EXPECT_EQ(reclaimed, early.size());
  for (const FlowId id : early) EXPECT_EQ(reported[id], 1);
  for (const FlowId id : late) EXPECT_EQ(reported[id], 0);
  EXPECT_EQ(table.size(), late.size());
  for (std::uint32_t n = 1; n < 100; n += 2) EXPECT_NE(table.find(key(n), flow_hash(key(n))), kNoFlow);
}

TEST(LazyExpiry, ReclaimStopsAtItsLimitAndResumesOnTheSameBucket) {
  Table table(256, kNanosecondStamps);
  table.enable_expiry(0);
  for (std::uint32_t n = 0; n < 200; ++n) insert_with_deadline(table, n, 10);
  table.set_clock(20);
  std::size_t cursor = 0;
  std::size_t total = 0;
  for (int call = 0; call < 1000 && table.size() > 0; ++call) {
    const auto [finished, reclaimed] = table.reclaim_expired(cursor, table.bucket_count(), 3, [](FlowId) {});
    EXPECT_LE(reclaimed, 3u);
    total += reclaimed;
  }
  EXPECT_EQ(total, 200u);
  EXPECT_EQ(table.size(), 0u);
}

TEST(LazyExpiry, AFullTableOfExpiredFlowsTakesNewFlowsByRecyclingTheirIds) {
  constexpr std::size_t kCapacity = 1024;
  Table table(kCapacity, kNanosecondStamps);
  table.enable_expiry(0);
  std::uint32_t n = 0;
  std::vector<bool> old_id(kCapacity, false);
  for (; table.size() < kCapacity; ++n) {
    const InsertResult r = table.insert(key(n), flow_hash(key(n)));
    if (!r.ok()) break;
    table.set_deadline(r.id, 50);
    old_id[r.id] = true;
  }
  const std::uint32_t old_flows = n;
  ASSERT_GT(old_flows, kCapacity * 9 / 10);
  table.set_clock(100);

  // No sweep: inserts alone must find room in the expired slots of the new keys' buckets.
  std::size_t recycled = 0, inserted = 0, full = 0;
  for (std::uint32_t m = 0; m < old_flows; ++m) {
    const FlowKeyV4 fresh = key(1'000'000 + m);
    const InsertResult r = table.insert(fresh, flow_hash(fresh));
    if (r.status == InsertStatus::recycled) {
      EXPECT_TRUE(old_id[r.id]) << "a recycled id must come from an expired flow";
      old_id[r.id] = false;
      ++recycled;
    } else if (r.status == InsertStatus::inserted) {
      ++inserted;
    } else {
      ++full;
      continue;
    }
    table.set_deadline(r.id, 1'000);
    EXPECT_EQ(table.find(fresh, flow_hash(fresh)), r.id);
  }
  EXPECT_GT(recycled, old_flows * 9 / 10);
  EXPECT_LE(table.size(), kCapacity);
  // Whatever could not be placed met buckets with no expired slot left: a sweep makes room.
  std::size_t cursor = 0;
  table.reclaim_expired(cursor, table.bucket_count(), ~std::size_t{0}, [](FlowId) {});
  for (std::uint32_t m = 0; m < old_flows; ++m) EXPECT_EQ(table.find(key(m), flow_hash(key(m))), kNoFlow);
  std::printf("[ cuckoopp ] %zu of %u inserts recycled an expired slot, %zu took a free one, %zu found none\n",
              recycled, old_flows, inserted, full);
}

// Many stamp wrap periods (1 ns units, 2^16 ns per wrap): long-lived flows refreshed now and then, short
// flows started and abandoned all the time, a sweep of a few buckets per step that keeps the guard (every
// bucket within 2^13 units). An abandoned flow must never become visible again, a refreshed one never
// vanish, and the live set always equals the reference.
TEST(LazyExpiry, StampsStayRightAcrossManyWrapPeriods) {
  constexpr std::size_t kCapacity = 4096;
  Table table(kCapacity, kNanosecondStamps);
  std::uint64_t now = 5;
  table.enable_expiry(now);
  std::mt19937 rng(3);
  std::unordered_map<std::uint32_t, std::uint64_t> deadline_of;  // flow number -> deadline (live ones)
  std::size_t cursor = 0;
  const std::size_t buckets_per_step = table.bucket_count() / 64;  // a sweep per 64 steps of <= 64 ns
  std::uint32_t next_flow = 0;
  std::size_t resurrections = 0, vanishings = 0;
  while (now < 20 * 65'536) {
    now += 1 + rng() % 64;
    table.set_clock(now);
    table.reclaim_expired(cursor, buckets_per_step, ~std::size_t{0}, [](FlowId) {});
    // Refresh a few live flows, start a few new ones with timeouts up to 8000 units.
    for (int i = 0; i < 4; ++i) {
      const std::uint32_t n = next_flow++;
      const InsertResult r = table.insert(key(n), flow_hash(key(n)));
      if (!r.ok()) continue;
      const std::uint64_t deadline = now + 1 + rng() % 8000;
      table.set_deadline(r.id, deadline);
      deadline_of[n] = deadline;
    }
    if (!deadline_of.empty() && rng() % 2 == 0) {
      auto it = deadline_of.begin();
      std::advance(it, rng() % std::min<std::size_t>(deadline_of.size(), 16));
      if (it->second > now) {
        const FlowId id = table.find(key(it->first), flow_hash(key(it->first)));
        ASSERT_NE(id, kNoFlow);
        it->second = now + 4000;
        table.set_deadline(id, it->second);
      }
    }
    // Check a sample of flows ever started, live and dead.
    for (int i = 0; i < 8; ++i) {
      const std::uint32_t n = rng() % next_flow;
      const auto it = deadline_of.find(n);
      const bool should_be_live = it != deadline_of.end() && it->second > now;
      const bool is_live = table.find(key(n), flow_hash(key(n))) != kNoFlow;
      if (is_live && !should_be_live) ++resurrections;
      if (!is_live && should_be_live) ++vanishings;
      if (it != deadline_of.end() && !should_be_live) deadline_of.erase(it);
    }
  }
  EXPECT_EQ(resurrections, 0u);
  EXPECT_EQ(vanishings, 0u);
}

}  // namespace
}  // namespace flowtrack
