// The lock-free strategy's reclamation, step by step on one thread: a retired id is not reused while a
// registered reader has not announced a quiescent state since the retirement, and is reused after.
#include <gtest/gtest.h>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/sync/lock_free_table.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "support/numbered_keys.hpp"
#ifdef FLOWTRACK_WITH_DPDK
#include "flowtrack/lab/dpdk_table.hpp"
#endif

namespace flowtrack {
namespace {

using testing::numbered_key;

template <class Table>
class LockFreeReclamation : public ::testing::Test {};

using Tables = ::testing::Types<
#ifdef FLOWTRACK_WITH_DPDK
    LockFreeTable<DpdkTable<FlowKeyV4, DpdkMode::lock_free>>,
#endif
    LockFreeTable<CuckooTable<FlowKeyV4, CuckooPrefetch::secondary_on_demand, CuckooReaders::optimistic>>>;
TYPED_TEST_SUITE(LockFreeReclamation, Tables);

InsertResult insert(auto& table, std::uint64_t n) {
  const FlowKeyV4 key = numbered_key<FlowKeyV4>(n);
  return table.insert(key, flow_hash(key));
}
bool erase(auto& table, std::uint64_t n) {
  const FlowKeyV4 key = numbered_key<FlowKeyV4>(n);
  return table.erase(key, flow_hash(key));
}

TYPED_TEST(LockFreeReclamation, RetiredIdWaitsForEveryReader) {
  TypeParam table(64);
  const unsigned a = table.register_reader();
  const unsigned b = table.register_reader();
  const FlowId id = insert(table, 1).id;
  ASSERT_TRUE(erase(table, 1));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find(numbered_key<FlowKeyV4>(1), flow_hash(numbered_key<FlowKeyV4>(1))), kNoFlow);
  EXPECT_EQ(table.pending(), 1u);

  table.quiescent(a);  // b may still hold the id
  table.reclaim_now();
  EXPECT_EQ(table.pending(), 1u);
  table.quiescent(b);
  table.reclaim_now();
  EXPECT_EQ(table.pending(), 0u);

  // The id is free again; filling the table must hand it out once more.
  bool reused = false;
  for (std::uint64_t n = 100; n < 100 + table.capacity(); ++n) reused |= insert(table, n).id == id;
  EXPECT_TRUE(reused);
  table.unregister_reader(a);
  table.unregister_reader(b);
}

TYPED_TEST(LockFreeReclamation, QuiescenceBeforeTheRetirementDoesNotCount) {
  TypeParam table(64);
  const unsigned reader = table.register_reader();
  insert(table, 1);
  table.quiescent(reader);  // before the erase: says nothing about ids it reads afterwards
  ASSERT_TRUE(erase(table, 1));
  table.reclaim_now();
  EXPECT_EQ(table.pending(), 1u);
  table.unregister_reader(reader);  // an offline reader holds nothing
  table.reclaim_now();
  EXPECT_EQ(table.pending(), 0u);
}

TYPED_TEST(LockFreeReclamation, StalledReaderMakesInsertsFailAsFullNotReuse) {
  TypeParam table(64);
  const unsigned reader = table.register_reader();
  std::uint64_t n = 0;
  std::vector<FlowId> live;
  while (true) {
    const InsertResult r = insert(table, n++);
    if (!r.ok()) break;
    live.push_back(r.id);
  }
  ASSERT_GE(live.size(), 32u);
  for (std::uint64_t k = 0; k < live.size(); ++k) ASSERT_TRUE(erase(table, k));
  // Every id is retired and the reader never announced: nothing may be reused, so inserts fail.
  EXPECT_EQ(insert(table, 1'000'000).status, InsertStatus::full);
  EXPECT_EQ(table.size(), 0u);
  table.quiescent(reader);
  const InsertResult after = insert(table, 1'000'000);
  EXPECT_EQ(after.status, InsertStatus::inserted);
  table.unregister_reader(reader);
}

TYPED_TEST(LockFreeReclamation, ScanSkipsRetiredAndRetiresWhatItErases) {
  TypeParam table(64);
  const unsigned reader = table.register_reader();
  for (std::uint64_t n = 0; n < 20; ++n) ASSERT_TRUE(insert(table, n).is_new());
  for (std::uint64_t n = 0; n < 5; ++n) ASSERT_TRUE(erase(table, n));
  std::size_t seen = 0;
  std::size_t cursor = 0;
  table.scan(cursor, table.scan_positions(), [&](const FlowKeyV4&, FlowId) {
    ++seen;
    return seen % 3 == 0 ? ScanAction::erase : ScanAction::keep;
  });
  EXPECT_EQ(seen, 15u);
  EXPECT_EQ(table.size(), 10u);
  EXPECT_EQ(table.pending(), 10u);
  table.quiescent(reader);
  table.reclaim_now();
  EXPECT_EQ(table.pending(), 0u);
  EXPECT_EQ(table.size(), 10u);
  table.unregister_reader(reader);
}

}  // namespace
}  // namespace flowtrack
