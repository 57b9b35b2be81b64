// The NamedIdTable contract (flow_table.hpp): a table that stores entries under the ids its caller
// chooses returns exactly those ids from find and find_bulk, answers an existing key with that key's own
// id, refuses an insert into a full table (whatever id it names) leaving it unchanged, and frees an entry on erase_named, for
// every table that offers the contract, against a reference map through random operations.
#include <absl/container/flat_hash_map.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "support/numbered_keys.hpp"

namespace flowtrack {
namespace {

using testing::numbered_key;
using testing::random_steps;

template <class Table>
class NamedIds : public ::testing::Test {};

using NamedTables = ::testing::Types<CuckooTable<FlowKeyV4>, CuckooTable<FlowKeyV6>,
                                     CuckooTable<FlowKeyV4, CuckooPrefetch::both_buckets, CuckooReaders::optimistic>>;
TYPED_TEST_SUITE(NamedIds, NamedTables);

static_assert(NamedIdTable<CuckooTable<FlowKeyV4>>);

TYPED_TEST(NamedIds, LookupsReturnTheCallersIdsThroughRandomInsertsAndErases) {
  using Key = typename TypeParam::key_type;
  constexpr std::size_t kCapacity = 4096;
  TypeParam table(kCapacity);
  absl::flat_hash_map<std::uint64_t, FlowId> reference;  // key number -> id
  std::vector<FlowId> free_ids(kCapacity);                // ids the caller has not handed out
  for (std::size_t i = 0; i < kCapacity; ++i) free_ids[i] = static_cast<FlowId>(kCapacity - 1 - i);
  std::mt19937_64 rng(7);
  const std::size_t steps = random_steps(60'000);
  for (std::size_t step = 0; step < steps; ++step) {
    const std::uint64_t n = rng() % (2 * kCapacity);
    const Key key = numbered_key<Key>(n);
    const auto it = reference.find(n);
    if (rng() % 3 != 0) {
      if (free_ids.empty()) continue;
      const FlowId id = free_ids[rng() % free_ids.size()];
      const InsertResult r = table.insert_named(key, flow_hash(key), id);
      if (it != reference.end()) {
        ASSERT_EQ(r.status, InsertStatus::existed);
        ASSERT_EQ(r.id, it->second);
      } else if (r.is_new()) {
        ASSERT_EQ(r.id, id);
        reference.emplace(n, id);
        std::erase(free_ids, id);
      } else {
        ASSERT_EQ(r.status, InsertStatus::full);  // a cuckoo path can fail below capacity
        ASSERT_EQ(table.find(key, flow_hash(key)), kNoFlow);
      }
    } else {
      ASSERT_EQ(table.erase_named(key, flow_hash(key)), it != reference.end());
      if (it != reference.end()) {
        free_ids.push_back(it->second);
        reference.erase(it);
      }
    }
    ASSERT_EQ(table.size(), reference.size());
  }
  // Every key, single and in bursts, against the reference.
  std::array<Key, 32> keys;
  std::array<std::uint32_t, 32> hashes;
  std::array<FlowId, 32> ids;
  for (std::uint64_t first = 0; first < 2 * kCapacity; first += keys.size()) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      keys[i] = numbered_key<Key>(first + i);
      hashes[i] = flow_hash(keys[i]);
    }
    table.find_bulk(keys, hashes, ids);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const auto it = reference.find(first + i);
      const FlowId expected = it == reference.end() ? kNoFlow : it->second;
      ASSERT_EQ(ids[i], expected);
      ASSERT_EQ(table.find(keys[i], hashes[i]), expected);
    }
  }
}

TYPED_TEST(NamedIds, AFullTableRefusesAnInsertAndStaysAsItWas) {
  using Key = typename TypeParam::key_type;
  TypeParam table(48);  // 8 buckets of 8 slots: every id fits at load 0.75, so the id count decides
  for (FlowId id = 0; id < table.capacity(); ++id) {
    const Key key = numbered_key<Key>(id);
    ASSERT_TRUE(table.insert_named(key, flow_hash(key), id).is_new());
  }
  const Key extra = numbered_key<Key>(1'000);
  EXPECT_EQ(table.insert_named(extra, flow_hash(extra), 0).status, InsertStatus::full);
  EXPECT_EQ(table.find(extra, flow_hash(extra)), kNoFlow);
  EXPECT_EQ(table.size(), table.capacity());
  for (FlowId id = 0; id < table.capacity(); ++id) {
    const Key key = numbered_key<Key>(id);
    EXPECT_EQ(table.find(key, flow_hash(key)), id);
  }
  const Key first = numbered_key<Key>(0);
  ASSERT_TRUE(table.erase_named(first, flow_hash(first)));
  EXPECT_TRUE(table.insert_named(extra, flow_hash(extra), 0).is_new());
  EXPECT_EQ(table.find(extra, flow_hash(extra)), 0u);
}

}  // namespace
}  // namespace flowtrack
