#include "flowtrack/packet/flow_key.hpp"

#include <gtest/gtest.h>

namespace flowtrack {
namespace {

TEST(FlowKeyV4, StoresNetworkOrderAndPrints) {
  const auto key = FlowKeyV4::from_host(0x0a000001, 0xc0a80102, 1234, 80, ipproto::kTcp);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(&key.src_addr);
  EXPECT_EQ(bytes[0], 10);
  EXPECT_EQ(bytes[3], 1);
  EXPECT_EQ(key.to_string(), "10.0.0.1:1234 -> 192.168.1.2:80 tcp");
}

TEST(FlowKeyV4, ReversedSwapsEndpointsAndIsAnInvolution) {
  const auto key = FlowKeyV4::from_host(1, 2, 3, 4, ipproto::kUdp);
  const auto reply = key.reversed();
  EXPECT_EQ(reply, FlowKeyV4::from_host(2, 1, 4, 3, ipproto::kUdp));
  EXPECT_EQ(reply.reversed(), key);
  EXPECT_NE(reply, key);
}

TEST(FlowKeyV6, ReversedAndPrinted) {
  FlowKeyV6 key;
  key.src_addr[0] = 0x20;
  key.src_addr[1] = 0x01;
  key.src_addr[15] = 1;
  key.dst_addr[0] = 0x20;
  key.dst_addr[1] = 0x01;
  key.dst_addr[15] = 2;
  key.src_port = to_network16(5555);
  key.dst_port = to_network16(443);
  key.protocol = ipproto::kTcp;
  EXPECT_EQ(key.to_string(), "[2001::1]:5555 -> [2001::2]:443 tcp");
  EXPECT_EQ(key.reversed().reversed(), key);
  EXPECT_EQ(key.reversed().src_port, to_network16(443));
}

}  // namespace
}  // namespace flowtrack
