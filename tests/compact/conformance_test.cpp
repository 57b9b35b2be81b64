// The requirements every compact structure (Othello, Cuckoo Filtable, Ludo) meets, on both key types:
// members always answer their value, a lookup structure fed every message equals a fresh export bit for
// bit, deletes never disturb survivors, bulk and single lookups agree, values of 1 to 32 bits.
#include <gtest/gtest.h>

#include <unordered_map>
#include <vector>

#include "flowtrack/util/random.hpp"
#include "support/compact_cases.hpp"

namespace flowtrack::testing {
namespace {

template <class Case>
class CompactConformance : public ::testing::Test {};

using Cases = ::testing::Types<OthelloCase<std::uint64_t>, OthelloCase<FlowKeyV4>, FiltableCase<std::uint64_t>,
                               FiltableCase<FlowKeyV4>, LudoCase<std::uint64_t>, LudoCase<FlowKeyV4>>;
TYPED_TEST_SUITE(CompactConformance, Cases);

// Random inserts (of new keys), value changes and deletes from a small start, so the structures grow
// and rebuild along the way. Calls check(builder, lookup, oracle) every `every` operations and at the end.
template <class Case, class Check>
void random_operations(std::size_t ops, std::size_t every, unsigned value_bits, Check&& check) {
  using Key = typename Case::Key;
  auto builder = Case::make(64, value_bits, 7);
  auto lookup = Case::export_lookup(builder);
  std::unordered_map<std::uint64_t, std::uint64_t> oracle;  // key number -> value
  std::vector<std::uint64_t> live;
  Random rng(42);
  const std::uint64_t mask = value_bits == 64 ? ~0ull : (1ull << value_bits) - 1;
  std::uint64_t next = 0;
  for (std::size_t op = 0; op < ops; ++op) {
    const std::uint64_t dice = rng.below(4);
    if (live.empty() || dice < 2) {
      const std::uint64_t value = rng.next() & mask;
      lookup->apply(builder.insert(compact_key<Key>(next), value));
      oracle[next] = value;
      live.push_back(next++);
    } else if (dice == 2) {
      const std::uint64_t n = live[rng.below(live.size())];
      const std::uint64_t value = rng.next() & mask;
      lookup->apply(builder.insert(compact_key<Key>(n), value));
      oracle[n] = value;
    } else {
      const std::size_t at = rng.below(live.size());
      lookup->apply(builder.erase(compact_key<Key>(live[at])));
      oracle.erase(live[at]);
      live[at] = live.back();
      live.pop_back();
    }
    if (op % every == every - 1 || op + 1 == ops) check(builder, *lookup, oracle);
  }
}

TYPED_TEST(CompactConformance, EveryMemberReturnsItsValueThroughRandomInsertsChangesAndDeletes) {
  using Key = typename TypeParam::Key;
  random_operations<TypeParam>(3000 * test_scale(), 250, 8, [](const auto& builder, const auto& lookup, const auto& oracle) {
    ASSERT_EQ(builder.size(), oracle.size());
    for (const auto& [n, value] : oracle) {
      ASSERT_EQ(builder.value_of(compact_key<Key>(n)), value) << "control plane, key " << n;
      ASSERT_EQ(TypeParam::read(lookup, compact_key<Key>(n)), value) << "lookup structure, key " << n;
    }
  });
}

TYPED_TEST(CompactConformance, LookupStructureFedEveryMessageIsBitIdenticalToAFreshExport) {
  random_operations<TypeParam>(2000 * test_scale(), 100, 8, [](const auto& builder, const auto& lookup, const auto&) {
    ASSERT_TRUE(TypeParam::identical(lookup, builder));
  });
}

TYPED_TEST(CompactConformance, DeletesNeverChangeASurvivorsAnswer) {
  using Key = typename TypeParam::Key;
  constexpr std::uint64_t kKeys = 600;
  auto builder = TypeParam::make(1024, 12, 3);
  auto lookup = TypeParam::export_lookup(builder);
  for (std::uint64_t n = 0; n < kKeys; ++n) lookup->apply(builder.insert(compact_key<Key>(n), (n * 37) & 0xfff));
  for (std::uint64_t n = 0; n < kKeys; n += 2) {
    lookup->apply(builder.erase(compact_key<Key>(n)));
    // A sample of survivors after every delete, all of them at the end.
    for (std::uint64_t s = 1; s < kKeys; s += (n + 2 < kKeys ? 34 : 2)) {
      ASSERT_EQ(TypeParam::read(*lookup, compact_key<Key>(s)), (s * 37) & 0xfff) << "survivor " << s << " after deleting " << n;
    }
  }
}

TYPED_TEST(CompactConformance, BulkLookupsAgreeWithSingleLookups) {
  using Key = typename TypeParam::Key;
  auto builder = TypeParam::make(2048, 16, 5);
  for (std::uint64_t n = 0; n < 1500; ++n) builder.insert(compact_key<Key>(n), n & 0xffff);
  const auto lookup = TypeParam::export_lookup(builder);
  std::vector<Key> keys;
  for (std::uint64_t n = 0; n < 1700; ++n) keys.push_back(compact_key<Key>(n * 3 % 1700));  // members and aliens
  std::vector<std::uint64_t> bulk(keys.size());
  TypeParam::read_bulk(*lookup, keys, bulk);
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(bulk[i], TypeParam::read(*lookup, keys[i])) << i;
}

TYPED_TEST(CompactConformance, ValuesOfOneToThirtyTwoBitsComeBackWhole) {
  using Key = typename TypeParam::Key;
  for (const unsigned bits : {1u, 5u, 13u, 20u, 32u}) {
    auto builder = TypeParam::make(512, bits, bits);
    auto lookup = TypeParam::export_lookup(builder);
    Random rng(bits);
    std::vector<std::uint64_t> values;
    for (std::uint64_t n = 0; n < 400; ++n) {
      values.push_back(rng.next() & ((1ull << bits) - 1));
      lookup->apply(builder.insert(compact_key<Key>(n), values.back()));
    }
    for (std::uint64_t n = 0; n < 400; ++n) ASSERT_EQ(TypeParam::read(*lookup, compact_key<Key>(n)), values[n]) << bits << " bits";
  }
}

}  // namespace
}  // namespace flowtrack::testing
