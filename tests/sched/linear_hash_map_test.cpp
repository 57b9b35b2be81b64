// The map table's linear hashing: what moves when a service gains or loses a core.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "flowtrack/sched/linear_hash_map.hpp"
#include "sched_fixtures.hpp"

namespace flowtrack {
namespace {

std::vector<std::uint16_t> cores_upto(unsigned n) { return LinearHashMap::core_range(0, n); }

TEST(LinearHashMap, RoundAndSplitFollowFromTheBucketCountWithTheErratumFixed) {
  for (unsigned b = 1; b <= 1000; ++b) {
    const auto shape = LinearHashMap::shape_of(b);
    EXPECT_EQ((1u << shape.round) + shape.split, b);
    EXPECT_LT(shape.split, 1u << shape.round);
  }
  // The paper's example at m = 4, b = 13: i = 1, p = 5 (its formula gives i = 2, p = -3). Base m = 1
  // counts two more rounds for the same table.
  EXPECT_EQ(LinearHashMap::shape_of(13).round, 1u + 2u);
  EXPECT_EQ(LinearHashMap::shape_of(13).split, 5u);
}

TEST(LinearHashMap, AddingACoreMovesExactlyTheSplitBucketsFlows) {
  for (unsigned b = 1; b < 40; ++b) {
    LinearHashMap map(cores_upto(b));
    const auto before = map.shape();
    std::vector<unsigned> bucket_before(65536);
    for (unsigned h = 0; h < 65536; ++h) bucket_before[h] = map.bucket_of(static_cast<std::uint16_t>(h));
    map.add_core(b);
    for (unsigned h = 0; h < 65536; ++h) {
      const unsigned after = map.bucket_of(static_cast<std::uint16_t>(h));
      if (bucket_before[h] != before.split) {
        ASSERT_EQ(after, bucket_before[h]) << "b=" << b << " hash=" << h;
      } else {
        // Bit i of the hash decides: stay in p, or go to the new bucket 2^i + p.
        const bool moves = (h >> before.round) & 1u;
        ASSERT_EQ(after, moves ? (1u << before.round) + before.split : before.split) << "b=" << b << " hash=" << h;
      }
    }
    EXPECT_EQ(map.core_of(static_cast<std::uint16_t>((1u << before.round) + before.split)), b);
  }
}

TEST(LinearHashMap, AboutOneOverBOfTheFlowsMovePerAddedCoreAgainstMostForARehash) {
  const HeaderTrace flows = testing::zipf_headers({.flows = 40'000, .packets = 1});
  for (unsigned b = 2; b <= 15; ++b) {
    LinearHashMap map(cores_upto(b));
    std::size_t moved = 0, rehash_moved = 0;
    std::vector<unsigned> before(flows.flows());
    for (std::size_t f = 0; f < flows.flows(); ++f) before[f] = map.core_of(flows.crc16_of_flow[f]);
    map.add_core(b);
    for (std::size_t f = 0; f < flows.flows(); ++f) {
      const std::uint16_t h = flows.crc16_of_flow[f];
      moved += map.core_of(h) != before[f];
      rehash_moved += h % b != h % (b + 1);
    }
    const double n = static_cast<double>(flows.flows());
    EXPECT_LE(moved / n, 1.0 / b + 0.02) << "b=" << b;
    EXPECT_GT(moved, 0u);
    EXPECT_GE(rehash_moved / n, (b - 1.0) / b - 0.02) << "b=" << b;
  }
}

TEST(LinearHashMap, RemovingTheAddedCoreReturnsItsFlowsToTheirBuckets) {
  for (unsigned b = 1; b < 20; ++b) {
    LinearHashMap map(cores_upto(b));
    std::vector<unsigned> original(65536);
    for (unsigned h = 0; h < 65536; ++h) original[h] = map.core_of(static_cast<std::uint16_t>(h));
    map.add_core(100);
    map.remove_core(100);
    for (unsigned h = 0; h < 65536; ++h) ASSERT_EQ(map.core_of(static_cast<std::uint16_t>(h)), original[h]) << b;
  }
}

TEST(LinearHashMap, RemovingAnyCoreMovesOnlyItsFlowsAndTheLastBuckets) {
  const unsigned b = 11;
  for (unsigned leaving = 0; leaving < b; ++leaving) {
    LinearHashMap map(cores_upto(b));
    const unsigned last_core = map.cores().back();
    std::vector<unsigned> before(65536);
    for (unsigned h = 0; h < 65536; ++h) before[h] = map.core_of(static_cast<std::uint16_t>(h));
    map.remove_core(leaving);
    for (unsigned h = 0; h < 65536; ++h) {
      const unsigned after = map.core_of(static_cast<std::uint16_t>(h));
      ASSERT_NE(after, leaving);
      if (before[h] != leaving && before[h] != last_core) {
        ASSERT_EQ(after, before[h]) << leaving << " " << h;
      }
    }
  }
}

TEST(LinearHashMap, RefusesToLoseItsLastCoreOrAnUnknownOne) {
  LinearHashMap map({7});
  EXPECT_THROW(map.remove_core(7), std::invalid_argument);
  EXPECT_THROW(map.remove_core(3), std::invalid_argument);
  EXPECT_THROW(LinearHashMap({}), std::invalid_argument);
}

}  // namespace
}  // namespace flowtrack
