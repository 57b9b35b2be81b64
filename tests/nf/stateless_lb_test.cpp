// The stateless load balancer: a flow goes where its hash says and replies get the VIP back, checksums
// right; and without state, a pool change moves flows: about 1/N of them with Maglev, most of them with
// hash modulo N (what the stateful balancer exists to prevent).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/nf/forwarder.hpp"
#include "flowtrack/nf/stateless_lb.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "support/checksum_oracle.hpp"

namespace flowtrack {
namespace {

constexpr std::uint32_t kVip = 0xc6120001;

StatelessLbConfig config(StatelessSelection selection, std::size_t backends = 5) {
  ServiceConfig s{"web", to_network32(kVip), to_network16(80), ipproto::kTcp, {}};
  for (std::size_t i = 0; i < backends; ++i) {
    s.backends.push_back({fmt::format("b{}", i), to_network32(0x0a010001 + static_cast<std::uint32_t>(i)), 0, 1});
  }
  return {{s}, selection, 251};
}

FlowKeyV4 through(auto& nf, const FlowKeyV4& key) {
  std::vector<std::uint8_t> frame = build_frame(FrameSpec::tcp4(key, tcpflag::kAck, 20));
  NfPacket packet{frame, {}, static_cast<std::uint32_t>(frame.size())};
  EXPECT_EQ(parse_frame(frame, LinkType::ethernet, packet.parsed), ParseStatus::ok);
  EXPECT_EQ(process_packet(nf, packet, 0), Verdict::forward);
  ParsedPacket after;
  EXPECT_EQ(parse_frame(frame, LinkType::ethernet, after), ParseStatus::ok);
  EXPECT_TRUE(testing::ipv4_header_valid(frame, after));
  EXPECT_TRUE(testing::transport_valid(frame, after));
  return after.key4;
}

TEST(StatelessLb, ForwardToTheHashedBackendAndRestoreTheVipOnReplies) {
  StatelessLb lb(config(StatelessSelection::maglev));
  const FlowKeyV4 key = FlowKeyV4::from_host(0x0a000001, kVip, 40000, 80, ipproto::kTcp);
  const FlowKeyV4 out = through(lb, key);
  const std::uint32_t chosen = lb.services()[0].consistent_choice(flow_hash(key));
  EXPECT_EQ(out.dst_addr, lb.services()[0].backends()[chosen].config.address);
  EXPECT_EQ(out.dst_port, key.dst_port);  // backend port 0 keeps the service port
  EXPECT_EQ(through(lb, out.reversed()), key.reversed());
  // Not to a service, not from a backend: untouched.
  const FlowKeyV4 other = FlowKeyV4::from_host(0x0a000001, 0x08080808, 1, 53, ipproto::kTcp);
  EXPECT_EQ(through(lb, other), other);
  EXPECT_EQ(lb.counters().passed, 1u);
}

double share_moved(StatelessSelection selection) {
  StatelessLb before(config(selection)), after(config(selection));
  after.apply({0, after.services()[0].config().name, PoolAction::remove, {"b2", 0, 0, 0}});
  if (!after.services()[0].backends()[2].removed) ADD_FAILURE() << "b2 (backend 2) was not removed";
  std::size_t moved = 0;
  constexpr int kFlows = 5000;
  for (int i = 0; i < kFlows; ++i) {
    const FlowKeyV4 key = FlowKeyV4::from_host(0x0a000000 + static_cast<std::uint32_t>(i), kVip, 40000, 80, ipproto::kTcp);
    moved += through(before, key).dst_addr != through(after, key).dst_addr;
  }
  return static_cast<double>(moved) / kFlows;
}

TEST(StatelessLb, RemovingABackendMovesAFifthWithMaglevAndMostWithModulo) {
  EXPECT_LT(share_moved(StatelessSelection::maglev), 0.2 + 0.05);
  EXPECT_GT(share_moved(StatelessSelection::modulo), 0.6);
}

TEST(Forwarder, ForwardsEverythingUntouched) {
  Forwarder fwd;
  const FlowKeyV4 key = FlowKeyV4::from_host(1, 2, 3, 4, ipproto::kTcp);
  EXPECT_EQ(through(fwd, key), key);
  EXPECT_EQ(fwd.counters().forwarded, 1u);
}

}  // namespace
}  // namespace flowtrack
