// The NAT's per-core port allocator: preservation, uniqueness, exhaustion, quarantine order.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "flowtrack/nf/internal/port_allocator.hpp"

namespace flowtrack {
namespace {

constexpr Nanos kQuarantine = 120 * kNanosPerSecond;
constexpr std::uint32_t kHolder = 7;
constexpr std::uint64_t kEndpoint = 0x0a000001'0006'9c40;  // 10.0.0.1, TCP, port 40000

TEST(PortAllocator, KeepsAFreePreferredPortElseDrawsAnotherFromTheSlice) {
  PortAllocator ports(1024, 2047, kQuarantine, 7);
  EXPECT_EQ(ports.allocate(1500, 0, kHolder, kEndpoint), 1500);
  const std::uint16_t other = ports.allocate(1500, 0, kHolder, kEndpoint);  // taken: another one
  EXPECT_NE(other, 1500);
  EXPECT_TRUE(ports.owns(other));
  const std::uint16_t outside = ports.allocate(80, 0, kHolder, kEndpoint);  // not in the slice: another one
  EXPECT_TRUE(ports.owns(outside));
  EXPECT_EQ(ports.in_use_count(), 3u);
}

TEST(PortAllocator, TheFirstChoiceIsThePortAFreeSliceGivesAndOnlyATakenOneChangesIt) {
  PortAllocator ports(1024, 2047, kQuarantine, 7);
  PortAllocator same(1024, 2047, kQuarantine, 7);
  EXPECT_EQ(ports.first_choice(1500, kEndpoint), 1500);  // in the slice: the preferred port
  const std::uint16_t drawn = ports.first_choice(80, kEndpoint);
  EXPECT_TRUE(ports.owns(drawn));
  EXPECT_EQ(ports.allocate(80, 0, kHolder, kEndpoint), drawn);
  EXPECT_EQ(ports.allocate(1500, 0, kHolder, kEndpoint + 1), 1500);
  // Another endpoint whose first choice is taken gets another port; the first choice stays what it was.
  EXPECT_EQ(same.first_choice(80, kEndpoint), drawn);
  EXPECT_NE(ports.allocate(80, 0, kHolder, kEndpoint), drawn);
  EXPECT_EQ(ports.first_choice(80, kEndpoint), drawn);
}

TEST(PortAllocator, HandsOutEveryPortOnceThenNothingUntilOneComesBack) {
  PortAllocator ports(60000, 60099, kQuarantine, 1);
  std::set<std::uint16_t> seen;
  for (int i = 0; i < 100; ++i) {
    const std::uint16_t p = ports.allocate(0, 0, kHolder, static_cast<std::uint64_t>(i));
    ASSERT_NE(p, 0);
    EXPECT_TRUE(seen.insert(p).second) << "port " << p << " handed out twice";
  }
  EXPECT_EQ(seen.size(), 100u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(ports.allocate(60050, i, kHolder, kEndpoint), 0) << "exhausted";
  ports.release(60042, 10 * kNanosPerSecond);
  EXPECT_EQ(ports.allocate(0, 10 * kNanosPerSecond + kQuarantine - 1, kHolder, kEndpoint), 0) << "still in quarantine";
  EXPECT_EQ(ports.allocate(0, 10 * kNanosPerSecond + kQuarantine, kHolder, kEndpoint), 60042);
}

TEST(PortAllocator, QuarantinedPortsComeBackInReleaseOrderAndNeverEarly) {
  PortAllocator ports(1, 3, kQuarantine, 3);
  for (std::uint16_t p = 1; p <= 3; ++p) ASSERT_EQ(ports.allocate(p, 0, kHolder, kEndpoint), p);
  ports.release(2, 1 * kNanosPerSecond);
  ports.release(3, 2 * kNanosPerSecond);
  ports.release(1, 3 * kNanosPerSecond);
  ports.release(1, 3 * kNanosPerSecond);  // not in use any more: ignored
  EXPECT_EQ(ports.allocate(1, kQuarantine, kHolder, kEndpoint), 0);
  EXPECT_EQ(ports.allocate(1, kQuarantine + 1 * kNanosPerSecond, kHolder, kEndpoint), 2);  // preferred 1 is not free yet
  EXPECT_EQ(ports.allocate(1, kQuarantine + 2 * kNanosPerSecond, kHolder, kEndpoint), 3);
  EXPECT_EQ(ports.allocate(1, kQuarantine + 3 * kNanosPerSecond, kHolder, kEndpoint), 1);
}

TEST(PortAllocator, WithoutQuarantineAReleasedPortIsFreeAtOnce) {
  PortAllocator ports(5000, 5000, 0, 1);
  EXPECT_EQ(ports.allocate(0, 0, kHolder, kEndpoint), 5000);
  EXPECT_EQ(ports.allocate(0, 0, kHolder, kEndpoint), 0);
  ports.release(5000, 0);
  EXPECT_EQ(ports.allocate(5000, 0, kHolder, kEndpoint), 5000);
}

TEST(PortAllocator, DrawsSpreadOverTheSlice) {
  PortAllocator ports(1024, 65535, 0, 11);
  std::set<std::uint16_t> halves[2];
  for (int i = 0; i < 2000; ++i) {
    const std::uint16_t p = ports.allocate(0, 0, kHolder, static_cast<std::uint64_t>(i));  // 2000 endpoints
    halves[p < 33280 ? 0 : 1].insert(p);
  }
  // Uniform draws put about half in each half of the slice (binomial: 1000 +- 22; 100 is > 4 sigma).
  EXPECT_NEAR(static_cast<double>(halves[0].size()), 1000.0, 100.0);
}

TEST(PortAllocator, APortNamesItsHolderWhileInUseOnly) {
  PortAllocator ports(2000, 2099, kQuarantine, 5);
  const std::uint16_t a = ports.allocate(2010, 0, 41, kEndpoint);
  const std::uint16_t b = ports.allocate(0, 0, 42, kEndpoint + 1);
  EXPECT_EQ(ports.holder_of(a), 41u);
  EXPECT_EQ(ports.holder_of(b), 42u);
  EXPECT_EQ(ports.holder_of(1999), PortAllocator::kNoHolder);  // outside the slice
  ports.release(a, 0);
  EXPECT_EQ(ports.holder_of(a), PortAllocator::kNoHolder);  // in quarantine
  EXPECT_FALSE(ports.in_use(a));
  EXPECT_EQ(ports.holder_of(b), 42u);
}

TEST(PortAllocator, EveryFreePortIsEquallyLikelyWhateverTheFreeSetLooksLike) {
  // A slice of 8 192 ports (two blocks of the free set) with the first 6 000 in use: endpoints' draws
  // must pick each of the 2 192 free ports with the same odds, not favour the ones after long runs of
  // used ports.
  PortAllocator ports(1, 8192, 0, 13);
  for (std::uint16_t p = 1; p <= 6000; ++p) ASSERT_EQ(ports.allocate(p, 0, kHolder, kEndpoint), p);
  std::vector<int> hits(8193, 0);
  constexpr int kDraws = 219200;  // 100 a free port
  for (int i = 0; i < kDraws; ++i) {
    const std::uint16_t p = ports.allocate(0, 0, kHolder, static_cast<std::uint64_t>(i));
    ASSERT_GT(p, 6000);
    ++hits[p];
    ports.release(p, 0);
  }
  double chi2 = 0;
  for (std::uint16_t p = 6001; p <= 8192; ++p) chi2 += (hits[p] - 100.0) * (hits[p] - 100.0) / 100.0;
  // 2 191 degrees of freedom: mean 2 191, sd 66; 2 191 + 6 sd is far beyond any fair draw.
  EXPECT_LT(chi2, 2191 + 6 * 66);
}

TEST(PortAllocator, AnEndpointGetsTheSamePortWhateverOrderTheOthersCameIn) {
  // 3 000 endpoints whose preferred port is taken (outside the slice), allocated in one order by one
  // allocator and in the reverse order by another with the same seed: each gets the same port in both
  // (a shared random stream would give nearly every one another port); and an endpoint asking again
  // after its port came back gets it again.
  PortAllocator forward(1024, 33279, 0, 21), backward(1024, 33279, 0, 21);
  constexpr std::uint64_t kEndpoints = 3000;
  std::vector<std::uint16_t> got(kEndpoints);
  for (std::uint64_t e = 0; e < kEndpoints; ++e) got[e] = forward.allocate(80, 0, kHolder, e);
  std::size_t same = 0;
  for (std::uint64_t e = kEndpoints; e-- > 0;) same += backward.allocate(80, 0, kHolder, e) == got[e];
  // Two endpoints may share a first candidate (3 000 draws over 32 256 ports: some 140 such pairs), and
  // then the order decides which one takes it; everyone else keeps their port.
  EXPECT_GE(same, kEndpoints - 2 * 200);
  forward.release(got[7], 0);
  EXPECT_EQ(forward.allocate(80, 0, kHolder, 7), got[7]);
}

TEST(PortAllocator, ANearlyFullSliceStillFindsItsLastFreePort) {
  // Every port but one in use: 64 candidates all taken (odds 1 - 64/4096 of it), then the search.
  PortAllocator ports(1, 4096, 0, 3);
  for (std::uint16_t p = 1; p <= 4096; ++p) {
    if (p != 4000) {
      ASSERT_EQ(ports.allocate(p, 0, kHolder, kEndpoint), p);
    }
  }
  EXPECT_EQ(ports.allocate(0, 0, kHolder, kEndpoint), 4000);
  EXPECT_EQ(ports.allocate(0, 0, kHolder, kEndpoint), 0);
}

}  // namespace
}  // namespace flowtrack
