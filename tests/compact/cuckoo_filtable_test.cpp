// Cuckoo Filtable's promise: zero collisions between valid keys, kept by the collision-avoidance sets:
// a key is in level 2 exactly when another valid key shares its fingerprint and a candidate bucket.
#include <gtest/gtest.h>

#include <unordered_set>

#include "flowtrack/util/random.hpp"
#include "support/compact_cases.hpp"

namespace flowtrack::compact {
namespace {

using testing::compact_key;

// True when another live key has k's fingerprint and shares a candidate bucket with it.
bool collides(const FiltableShape& shape, std::uint64_t k, const std::unordered_set<std::uint64_t>& live) {
  const FiltableProbe p = filtable_probe(shape, compact_key<std::uint64_t>(k));
  for (const std::uint64_t o : live) {
    if (o == k) continue;
    const FiltableProbe q = filtable_probe(shape, compact_key<std::uint64_t>(o));
    const bool shares = p.bucket[0] == q.bucket[0] || p.bucket[0] == q.bucket[1] || p.bucket[1] == q.bucket[0] ||
                        p.bucket[1] == q.bucket[1];
    if (shares && p.fingerprint == q.fingerprint) return true;
  }
  return false;
}

// 2-bit fingerprints (values 1..3): most keys collide, pairs and triples and more, so level 2 is busy.
TEST(CuckooFiltable, ForcedFingerprintCollisionsGoToLevel2AndEveryMemberStaysExact) {
  FiltableConfig c;
  c.capacity = 400;
  c.fingerprint_bits = 2;
  c.value_bits = 16;
  FiltableBuilder<std::uint64_t> b(c);
  auto lookup = std::make_unique<FiltableLookup<std::uint64_t>>(b.export_image());
  std::unordered_set<std::uint64_t> live;
  for (std::uint64_t n = 0; n < 300; ++n) {
    lookup->apply(b.insert(compact_key<std::uint64_t>(n), n));
    live.insert(n);
  }
  auto check = [&] {
    std::size_t in_level2 = 0;
    for (const std::uint64_t n : live) {
      ASSERT_EQ(lookup->find(compact_key<std::uint64_t>(n)), n) << n;
      const bool level2 = b.in_level2(compact_key<std::uint64_t>(n));
      ASSERT_EQ(level2, collides(b.shape(), n, live)) << "key " << n << " is in the wrong level";
      in_level2 += level2;
    }
    EXPECT_GT(in_level2, live.size() / 4);
    EXPECT_TRUE(lookup->image() == b.export_image());
  };
  check();
  // Deleting half: keys left without a twin move back to level 1.
  for (std::uint64_t n = 0; n < 300; n += 2) {
    lookup->apply(b.erase(compact_key<std::uint64_t>(n)));
    live.erase(n);
  }
  check();
}

TEST(CuckooFiltable, MostAliensAreRejectedWithTwelveBitFingerprints) {
  FiltableConfig c;
  c.capacity = 8000;
  c.fingerprint_bits = 12;
  FiltableBuilder<FlowKeyV4> b(c);
  for (std::uint64_t n = 0; n < 7600; ++n) b.insert(compact_key<FlowKeyV4>(n), n & 0xff);
  const FiltableLookup<FlowKeyV4> lookup(b.export_image());
  std::size_t accepted = 0;
  for (std::uint64_t n = 0; n < 50000; ++n) accepted += lookup.find(compact_key<FlowKeyV4>(100000 + n)).has_value();
  // FP ~ 1 - (1 - 2^-12)^(0.95 * 8) = 0.19 %.
  EXPECT_LT(accepted, 50000 * 0.004);
}

}  // namespace
}  // namespace flowtrack::compact
