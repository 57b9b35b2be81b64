// Othello's own promises: an acyclic graph after any updates, the emptiness bit and fingerprints
// rejecting aliens at the rates the thesis derives, uniform alien answers with random fill, and
// OthelloMap's exact membership, through its growths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <unordered_map>

#include "flowtrack/compact/othello_map.hpp"
#include "flowtrack/util/random.hpp"
#include "support/compact_cases.hpp"

namespace flowtrack::compact {
namespace {

using testing::compact_key;

TEST(Othello, GraphStaysAcyclicThroughInsertsChangesAndDeletes) {
  OthelloConfig c;
  c.capacity = 512;
  OthelloBuilder<std::uint64_t> b(c);
  Random rng(1);
  for (std::uint64_t n = 0; n < 2000; ++n) {
    b.insert(compact_key<std::uint64_t>(n), n & 0xff);
    if (n % 3 == 0) b.insert(compact_key<std::uint64_t>(rng.below(n + 1)), 7);
    if (n % 5 == 0) b.erase(compact_key<std::uint64_t>(rng.below(n + 1)));
    if (n % 100 == 0) {
      ASSERT_TRUE(b.acyclic()) << n;
    }
  }
  EXPECT_TRUE(b.acyclic());
}

// |A| = 1.33 n, |B| = n at full load: a cell is empty with odds e^-0.75 (A) and e^-1 (B), so an alien
// hits an empty cell with odds 1 - (1 - 0.472)(1 - 0.368) = 0.666 (Appendix A.1.2; §3.4.3 says 0.632).
TEST(Othello, EmptinessBitDetectsTwoThirdsOfAliensAtFullLoad) {
  constexpr std::uint32_t kKeys = 20000;
  OthelloConfig c;
  c.capacity = kKeys;
  c.emptiness = true;
  OthelloBuilder<std::uint64_t> b(c);
  std::vector<std::uint64_t> keys, values(kKeys, 1);
  for (std::uint64_t n = 0; n < kKeys; ++n) keys.push_back(compact_key<std::uint64_t>(n));
  b.assign(keys, values);
  const OthelloLookup lookup(b.export_image());
  std::size_t detected = 0;
  constexpr std::size_t kAliens = 40000;
  for (std::uint64_t n = 0; n < kAliens; ++n) detected += !lookup.find(compact_key<std::uint64_t>(kKeys + n)).has_value();
  const double rate = static_cast<double>(detected) / kAliens;
  const double expected = 1 - (1 - std::exp(-1.0 / 1.3334)) * (1 - std::exp(-1.0));
  EXPECT_NEAR(rate, expected, 0.02);
  for (const auto k : keys) ASSERT_EQ(lookup.find(k), 1u);
}

TEST(Othello, FingerprintBitsRejectAliensAtTheDerivedRate) {
  constexpr std::uint32_t kKeys = 5000;
  OthelloConfig c;
  c.capacity = kKeys;
  c.value_bits = 4;
  c.fingerprint_bits = 7;
  c.emptiness = true;
  OthelloBuilder<FlowKeyV4> b(c);
  for (std::uint64_t n = 0; n < kKeys; ++n) b.insert(compact_key<FlowKeyV4>(n), n & 0xf);
  const OthelloLookup lookup(b.export_image());
  for (std::uint64_t n = 0; n < kKeys; ++n) ASSERT_EQ(lookup.find(compact_key<FlowKeyV4>(n)), n & 0xf);
  std::size_t accepted = 0;
  constexpr std::size_t kAliens = 100000;
  for (std::uint64_t n = 0; n < kAliens; ++n) accepted += lookup.find(compact_key<FlowKeyV4>(kKeys + n)).has_value();
  // FP = (1 - eps_a)(1 - eps_b) / 2^l_f, about 0.334 / 128 = 0.26 % at full load.
  EXPECT_LT(static_cast<double>(accepted) / kAliens, 0.006);
}

TEST(Othello, RandomFillGivesAliensUniformValues) {
  OthelloConfig c;
  c.capacity = 2000;
  c.value_bits = 4;
  c.random_fill = true;
  OthelloBuilder<std::uint64_t> b(c);
  for (std::uint64_t n = 0; n < 2000; ++n) b.insert(compact_key<std::uint64_t>(n), 0);  // every member answers 0
  const OthelloLookup lookup(b.export_image());
  std::array<double, 16> counts{};
  constexpr std::size_t kAliens = 32000;
  for (std::uint64_t n = 0; n < kAliens; ++n) ++counts[lookup.lookup(compact_key<std::uint64_t>(1000000 + n))];
  double chi2 = 0;
  for (const double count : counts) chi2 += (count - kAliens / 16.0) * (count - kAliens / 16.0) / (kAliens / 16.0);
  EXPECT_LT(chi2, 37.7);  // 15 degrees of freedom, p = 0.001
}

TEST(OthelloMap, MembershipIsExactAndStatesFollowAnOracle) {
  OthelloMap<FlowKeyV4> map(16);
  std::unordered_map<std::uint64_t, std::uint32_t> oracle;
  Random rng(9);
  for (std::uint64_t op = 0; op < 4000; ++op) {
    const std::uint64_t n = rng.below(1500);
    if (rng.below(3) == 0) {
      EXPECT_EQ(map.erase(compact_key<FlowKeyV4>(n)), oracle.erase(n) == 1);
    } else {
      const auto state = static_cast<std::uint32_t>(rng.next());
      EXPECT_EQ(map.insert_or_assign(compact_key<FlowKeyV4>(n), state), !oracle.contains(n));
      oracle[n] = state;
    }
  }
  ASSERT_EQ(map.size(), oracle.size());
  for (std::uint64_t n = 0; n < 3000; ++n) {
    const auto it = oracle.find(n);
    ASSERT_EQ(map.find(compact_key<FlowKeyV4>(n)), it == oracle.end() ? std::nullopt : std::optional(it->second)) << n;
  }
}

// An owner that knows its keys' slots (OthelloMap) updates by slot with no key index: the arrays must
// come out exactly as the same updates by key leave them, through growths, value changes and deletes.
TEST(Othello, UpdatesBySlotWithoutAKeyIndexLeaveTheArraysOfUpdatesByKey) {
  OthelloConfig c;
  c.capacity = 64;
  c.value_bits = 10;
  OthelloBuilder<std::uint64_t> by_key(c);
  c.key_index = false;
  OthelloBuilder<std::uint64_t> by_slot(c);
  Random rng(3);
  for (std::uint64_t op = 0; op < 3000; ++op) {
    const std::uint64_t key = compact_key<std::uint64_t>(rng.below(700));
    const std::uint64_t value = rng.below(1024);
    const std::optional<std::uint32_t> slot = by_key.slot_of(key);
    if (rng.below(4) == 0) {
      if (!slot) continue;
      by_key.erase(key);
      by_slot.erase_slot(*slot);
    } else {
      by_key.insert(key, value);
      if (slot) {
        by_slot.set_value(*slot, value);
      } else {
        by_slot.append(key, value);
      }
    }
    ASSERT_EQ(by_slot.size(), by_key.size());
    if (op % 100 == 0) {
      ASSERT_EQ(by_slot.export_image().shape, by_key.export_image().shape) << op;
      ASSERT_EQ(by_slot.export_image().cells, by_key.export_image().cells) << op;
    }
  }
  EXPECT_TRUE(by_slot.acyclic());
  ASSERT_EQ(by_slot.slots(), by_key.slots());
  for (std::uint32_t slot = 0; slot < by_key.slots(); ++slot) {
    ASSERT_EQ(by_slot.live(slot), by_key.live(slot));
    if (by_key.live(slot)) {
      ASSERT_EQ(by_slot.key_at(slot), by_key.key_at(slot));
    }
  }
}

// Slots are stable: an erase writes no cell (no survivor's value or slot changes, so OthelloMap's
// positions stay put) and leaves a hole that the next insert takes.
TEST(Othello, EraseMovesNoKeyAndWritesNoCellAndItsSlotIsTakenNext) {
  OthelloConfig c;
  c.capacity = 256;
  c.value_bits = 9;
  OthelloBuilder<std::uint64_t> b(c);
  for (std::uint64_t n = 0; n < 200; ++n) b.insert(compact_key<std::uint64_t>(n), n);
  const OthelloImage before = b.export_image();
  const std::uint32_t erased = *b.slot_of(compact_key<std::uint64_t>(17));
  EXPECT_TRUE(b.erase(compact_key<std::uint64_t>(17)).empty());
  EXPECT_EQ(b.export_image().cells, before.cells);
  EXPECT_FALSE(b.live(erased));
  EXPECT_EQ(b.size(), 199u);
  for (std::uint64_t n = 0; n < 200; ++n) {
    if (n == 17) continue;
    ASSERT_EQ(b.value_of(compact_key<std::uint64_t>(n)), n);
    ASSERT_TRUE(b.live(*b.slot_of(compact_key<std::uint64_t>(n))));
  }
  EXPECT_EQ(b.next_slot(), erased);
  b.insert(compact_key<std::uint64_t>(1000), 5);
  EXPECT_EQ(b.slot_of(compact_key<std::uint64_t>(1000)), erased);
  EXPECT_EQ(b.slots(), 200u);
  EXPECT_TRUE(b.acyclic());
  for (std::uint64_t n = 0; n < 200; ++n) {
    if (n == 17) continue;
    ASSERT_EQ(b.lookup(compact_key<std::uint64_t>(n)), n);
  }
}

// A map that starts small grows many times (each growth a wider index over the same keys) while keys
// come and go; at every step it must answer as a map whose index never grows (built for every key at
// once), and its positions must number every key once.
TEST(OthelloMap, GrowingGivesTheFindsOfAMapBuiltAtOnce) {
  OthelloMap<std::uint64_t> growing(8), at_once(1 << 14);
  Random rng(21);
  for (std::uint64_t op = 0; op < 12000; ++op) {
    // Two inserts or changes for each erase: the population grows to a few thousand, across growths.
    const std::uint64_t key = compact_key<std::uint64_t>(rng.below(6000));
    if (rng.below(3) == 0) {
      ASSERT_EQ(growing.erase(key), at_once.erase(key)) << op;
    } else {
      const auto state = static_cast<std::uint32_t>(rng.next());
      ASSERT_EQ(growing.insert_or_assign(key, state), at_once.insert_or_assign(key, state)) << op;
    }
    ASSERT_EQ(growing.size(), at_once.size()) << op;
    ASSERT_EQ(growing.find(key), at_once.find(key)) << op;
    if (op % 500 == 0) {
      for (std::uint64_t n = 0; n < 6000; ++n) {
        ASSERT_EQ(growing.find(compact_key<std::uint64_t>(n)), at_once.find(compact_key<std::uint64_t>(n))) << op << " " << n;
      }
      std::size_t held = 0;
      growing.for_each([&](std::uint64_t key, std::uint32_t state) {
        ASSERT_EQ(growing.find(key), state) << op;
        ++held;
      });
      ASSERT_EQ(held, growing.size()) << op;
    }
  }
  EXPECT_GT(growing.index().capacity(), 2048u);  // it did grow
}

// The map places a new key where the index's cells already point when that position is free (at least
// half are): such an insert changes no cell of the index, where a position chosen otherwise would xor a
// tree nearly every time.
TEST(OthelloMap, MostInsertsTakeThePositionTheCellsGiveAndChangeNoCell) {
  OthelloMap<std::uint64_t> map(1024);
  std::size_t unchanged = 0;
  constexpr std::uint64_t kKeys = 600;
  for (std::uint64_t n = 0; n < kKeys; ++n) {
    const PackedCells before = map.index().export_image().cells;
    ASSERT_TRUE(map.insert_or_assign(compact_key<std::uint64_t>(n), static_cast<std::uint32_t>(n)));
    unchanged += map.index().export_image().cells == before ? 1 : 0;
  }
  EXPECT_GT(unchanged, kKeys / 2);
  for (std::uint64_t n = 0; n < kKeys; ++n) ASSERT_EQ(map.find(compact_key<std::uint64_t>(n)), n);
  EXPECT_TRUE(map.index().acyclic());
}

// Churn at full load (Concury's steady population): keys whose edges close cycles are parked and
// rebuilt into the index in groups. Every find must follow an oracle throughout, parked keys included
// (found, changed, erased), and a refill must answer every key, parked ones included.
TEST(OthelloMap, ParkedKeysAreFoundChangedErasedAndRefilledLikeTheOthers) {
  constexpr std::uint32_t kPopulation = 2000;
  OthelloMap<std::uint64_t> map(kPopulation);
  std::unordered_map<std::uint64_t, std::uint32_t> oracle;
  Random rng(8);
  std::size_t saw_parked = 0;
  for (std::uint64_t op = 0; op < 60000; ++op) {
    const std::uint64_t key = compact_key<std::uint64_t>(rng.below(2 * kPopulation));
    const auto state = static_cast<std::uint32_t>(rng.below(4096));
    if (oracle.size() >= kPopulation || (oracle.contains(key) && rng.below(2) == 0)) {
      // Depart a held key (this one when held, else the oracle's first).
      const std::uint64_t gone = oracle.contains(key) ? key : oracle.begin()->first;
      ASSERT_TRUE(map.erase(gone)) << op;
      oracle.erase(gone);
    } else {
      ASSERT_EQ(map.insert_or_assign(key, state), !oracle.contains(key)) << op;
      oracle[key] = state;
    }
    saw_parked = std::max(saw_parked, map.parked());
    ASSERT_EQ(map.size(), oracle.size()) << op;
    ASSERT_EQ(map.find(key), oracle.contains(key) ? std::optional(oracle[key]) : std::nullopt) << op;
  }
  EXPECT_GT(saw_parked, 0u);  // the churn did close cycles
  for (const auto& [key, state] : oracle) ASSERT_EQ(map.find(key), state);
  const OthelloLookup lookup(map.refill_states(12, 3, nullptr));
  EXPECT_EQ(map.parked(), 0u);
  for (const auto& [key, state] : oracle) ASSERT_EQ(lookup.lookup(key), state);
}

// Concury's use of one refill over many updates: keys learnt with the answer the arrays give them (no
// write), departures, and now and then one key's state changed and the arrays restated for it. A restate
// must give that key its state and keep every other held key's answer, through parked keys and index
// growth; where it cannot, a refill over the arrays in use does.
TEST(OthelloMap, RestatingOneKeyGivesItsNewStateAndKeepsEveryOtherKeysAnswer) {
  OthelloMap<std::uint64_t> map(512);
  std::unordered_map<std::uint64_t, std::uint32_t> oracle;
  Random rng(9);
  OthelloImage image = map.refill_states(12, 4, nullptr);
  auto lookup = std::make_unique<OthelloLookup>(image);
  std::size_t restated = 0, refilled = 0;
#ifdef FLOWTRACK_SANITIZED
  constexpr std::uint64_t kOps = 8000;  // for time: every restate checks every held key
#else
  constexpr std::uint64_t kOps = 20000;
#endif
  for (std::uint64_t op = 0; op < kOps; ++op) {
    const std::uint64_t key = compact_key<std::uint64_t>(rng.below(6000));
    const std::uint64_t kind = rng.below(16);
    if (oracle.contains(key) && kind < 4) {
      ASSERT_TRUE(map.erase(key));
      oracle.erase(key);
    } else if (oracle.contains(key) && kind < 6) {
      const auto state = static_cast<std::uint32_t>(rng.below(4096));
      map.insert_or_assign(key, state);
      oracle[key] = state;
      if (map.restate(image, key)) {
        ++restated;
      } else {
        image = map.refill_states(12, 4, &image);
        ++refilled;
      }
      lookup = std::make_unique<OthelloLookup>(image);
      for (const auto& [k, v] : oracle) ASSERT_EQ(lookup->lookup(k), v) << op;
    } else if (!oracle.contains(key)) {
      const auto answer = static_cast<std::uint32_t>(lookup->lookup(key));
      map.insert_or_assign(key, answer);
      oracle[key] = answer;
    }
  }
  EXPECT_GT(restated, kOps / 40);
  EXPECT_GT(refilled, 0u);  // parked keys, growth
}

TEST(OthelloMap, RefillOverItsGraphAnswersEveryKeyWithTheNewValues) {
  OthelloMap<std::uint64_t> map(1024);
  for (std::uint64_t n = 0; n < 1000; ++n) map.insert_or_assign(compact_key<std::uint64_t>(n), static_cast<std::uint32_t>(n % 4096));
  const OthelloImage image = map.refill_states(12, 5, nullptr);
  EXPECT_EQ(image.shape.seed, map.index().shape().seed);  // the same graph: no rehash
  const OthelloLookup lookup(image);
  for (std::uint64_t n = 0; n < 1000; ++n) ASSERT_EQ(lookup.lookup(compact_key<std::uint64_t>(n)), n % 4096);
}

}  // namespace
}  // namespace flowtrack::compact
