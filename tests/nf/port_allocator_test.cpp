// The NAT's per-core port allocator: preservation, uniqueness, exhaustion, quarantine order.
#include <gtest/gtest.h>

#include <set>

#include "flowtrack/nf/port_allocator.hpp"

namespace flowtrack {
namespace {

constexpr Nanos kQuarantine = 120 * kNanosPerSecond;

TEST(PortAllocator, KeepsAFreePreferredPortElseDrawsAnotherFromTheSlice) {
  PortAllocator ports(1024, 2047, kQuarantine, 7);
  EXPECT_EQ(ports.allocate(1500, 0), 1500);
  const std::uint16_t other = ports.allocate(1500, 0);  // taken: another one
  EXPECT_NE(other, 1500);
  EXPECT_TRUE(ports.owns(other));
  const std::uint16_t outside = ports.allocate(80, 0);  // not in the slice: another one
  EXPECT_TRUE(ports.owns(outside));
  EXPECT_EQ(ports.in_use_count(), 3u);
}

TEST(PortAllocator, HandsOutEveryPortOnceThenNothingUntilOneComesBack) {
  PortAllocator ports(60000, 60099, kQuarantine, 1);
  std::set<std::uint16_t> seen;
  for (int i = 0; i < 100; ++i) {
    const std::uint16_t p = ports.allocate(0, 0);
    ASSERT_NE(p, 0);
    EXPECT_TRUE(seen.insert(p).second) << "port " << p << " handed out twice";
  }
  EXPECT_EQ(seen.size(), 100u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(ports.allocate(60050, i), 0) << "exhausted";
  ports.release(60042, 10 * kNanosPerSecond);
  EXPECT_EQ(ports.allocate(0, 10 * kNanosPerSecond + kQuarantine - 1), 0) << "still in quarantine";
  EXPECT_EQ(ports.allocate(0, 10 * kNanosPerSecond + kQuarantine), 60042);
}

TEST(PortAllocator, QuarantinedPortsComeBackInReleaseOrderAndNeverEarly) {
  PortAllocator ports(1, 3, kQuarantine, 3);
  for (std::uint16_t p = 1; p <= 3; ++p) ASSERT_EQ(ports.allocate(p, 0), p);
  ports.release(2, 1 * kNanosPerSecond);
  ports.release(3, 2 * kNanosPerSecond);
  ports.release(1, 3 * kNanosPerSecond);
  ports.release(1, 3 * kNanosPerSecond);  // not in use any more: ignored
  EXPECT_EQ(ports.allocate(1, kQuarantine), 0);
  EXPECT_EQ(ports.allocate(1, kQuarantine + 1 * kNanosPerSecond), 2);  // preferred 1 is not free yet
  EXPECT_EQ(ports.allocate(1, kQuarantine + 2 * kNanosPerSecond), 3);
  EXPECT_EQ(ports.allocate(1, kQuarantine + 3 * kNanosPerSecond), 1);
}

TEST(PortAllocator, WithoutQuarantineAReleasedPortIsFreeAtOnce) {
  PortAllocator ports(5000, 5000, 0, 1);
  EXPECT_EQ(ports.allocate(0, 0), 5000);
  EXPECT_EQ(ports.allocate(0, 0), 0);
  ports.release(5000, 0);
  EXPECT_EQ(ports.allocate(5000, 0), 5000);
}

TEST(PortAllocator, DrawsSpreadOverTheSlice) {
  PortAllocator ports(1024, 65535, 0, 11);
  std::set<std::uint16_t> halves[2];
  for (int i = 0; i < 2000; ++i) {
    const std::uint16_t p = ports.allocate(0, 0);
    halves[p < 33280 ? 0 : 1].insert(p);
  }
  // Uniform draws put about half in each half of the slice (binomial: 1000 +- 22; 100 is > 4 sigma).
  EXPECT_NEAR(static_cast<double>(halves[0].size()), 1000.0, 100.0);
}

}  // namespace
}  // namespace flowtrack
