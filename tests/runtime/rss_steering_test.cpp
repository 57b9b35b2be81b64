// RSS steering: deterministic, both directions of a connection on one queue (symmetric key), every
// packet assigned, and a realistic trace spread over the queues.
#include <gtest/gtest.h>

#include <absl/container/flat_hash_map.h>

#include "flowtrack/hash/crc32c.hpp"

#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/runtime/rss_steering.hpp"

namespace flowtrack {
namespace {

TEST(RssSteering, BothDirectionsOfEveryConnectionShareAQueue) {
  CampusProfile profile;
  profile.flows = 2'000;
  const PacketStore trace = generate_campus(profile);
  const RssSteering steering(4);
  absl::flat_hash_map<FlowKeyV4, unsigned, FlowKeyHasher> queue_of_key;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    ParsedPacket parsed;
    ASSERT_EQ(parse_frame(trace[i].bytes, trace.link_type(), parsed), ParseStatus::ok);
    const unsigned q = steering.queue_of(trace[i].bytes, trace.link_type());
    ASSERT_LT(q, 4u);
    const auto [it, fresh] = queue_of_key.emplace(parsed.key4, q);
    EXPECT_EQ(it->second, q) << "one key, two queues";
    const auto reverse = queue_of_key.find(parsed.key4.reversed());
    if (reverse != queue_of_key.end()) {
      EXPECT_EQ(reverse->second, q) << "the two directions split";
    }
  }
}

TEST(RssSteering, PartitionTakesEveryPacketOnceAndSpreadsFlows) {
  CampusProfile profile;
  profile.flows = 4'000;
  const PacketStore trace = generate_campus(profile);
  const PacketPartition partition = partition_by_rss(trace, RssSteering(4));
  ASSERT_EQ(partition.packets.size(), 4u);
  std::vector<bool> seen(trace.size(), false);
  std::size_t flows = 0;
  for (unsigned q = 0; q < 4; ++q) {
    for (std::size_t i = 1; i < partition.packets[q].size(); ++i) {
      EXPECT_LT(partition.packets[q][i - 1], partition.packets[q][i]) << "trace order kept";
    }
    for (const std::uint32_t p : partition.packets[q]) {
      EXPECT_FALSE(seen[p]);
      seen[p] = true;
    }
    flows += partition.ipv4_flows[q];
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), static_cast<long>(trace.size()));
  for (unsigned q = 0; q < 4; ++q) {
    // 8000 directed flows over 4 queues: each near 2000 (binomial, sd ~ 39; 4 sd of slack plus RETA bias).
    EXPECT_NEAR(static_cast<double>(partition.ipv4_flows[q]), flows / 4.0, 300.0);
  }
}

TEST(RssSteering, UnparsableFramesGoToQueueZero) {
  const RssSteering steering(4);
  const std::vector<std::uint8_t> runt(10, 0xff);
  EXPECT_EQ(steering.queue_of(runt, LinkType::ethernet), 0u);
}

}  // namespace
}  // namespace flowtrack
