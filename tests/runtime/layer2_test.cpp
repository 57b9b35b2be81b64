// The live data plane's layer 2 (runtime/layer2.hpp): ARP frames, the addresses each port answers for,
// neighbours learnt and asked for, one-hop routing.
#include "flowtrack/runtime/layer2.hpp"
#include "support/addresses.hpp"

#include <gtest/gtest.h>

#include <array>

namespace flowtrack {
namespace {

const MacAddress kPortA{0x02, 0, 0, 0, 0xa, 1}, kPortB{0x02, 0, 0, 0, 0xb, 1};
const MacAddress kClient{0x02, 0, 0, 0, 0xc, 2}, kBackend{0x02, 0, 0, 0, 0xb, 0x11};

// Port 0: 10.1.0.1/24, no gateway; port 1: 10.2.0.1/24, gateway 10.2.0.254. The function owns 10.1.0.100.
Layer2 two_ports() {
  return Layer2({{kPortA, test::ipv4("10.1.0.1"), 24, 0}, {kPortB, test::ipv4("10.2.0.1"), 24, test::ipv4("10.2.0.254")}}, {test::ipv4("10.1.0.100")});
}

ArpMessage request_from_client(const char* target) {
  return {ArpMessage::kRequest, kClient, test::ipv4("10.1.0.2"), MacAddress{}, test::ipv4(target)};
}

TEST(Arp, WrittenMessageParsesBackUnchangedInAMinimumFrame) {
  const ArpMessage m{ArpMessage::kReply, kPortA, test::ipv4("10.1.0.100"), kClient, test::ipv4("10.1.0.2")};
  std::array<std::uint8_t, kArpFrameSize> frame{};
  ASSERT_EQ(write_arp(frame, kClient, kPortA, m), kArpFrameSize);
  EXPECT_TRUE(std::equal(kClient.begin(), kClient.end(), frame.begin()));
  EXPECT_EQ(frame[12], 0x08);
  EXPECT_EQ(frame[13], 0x06);
  const auto parsed = parse_arp(frame);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->operation, ArpMessage::kReply);
  EXPECT_EQ(parsed->sender_mac, kPortA);
  EXPECT_EQ(parsed->sender_ip, test::ipv4("10.1.0.100"));
  EXPECT_EQ(parsed->target_mac, kClient);
  EXPECT_EQ(parsed->target_ip, test::ipv4("10.1.0.2"));
}

TEST(Arp, RejectsTruncatedOtherProtocolsAndUnknownOperations) {
  std::array<std::uint8_t, kArpFrameSize> frame{};
  write_arp(frame, kBroadcastMac, kClient, request_from_client("10.1.0.1"));
  EXPECT_FALSE(parse_arp(std::span(frame).first(41)));  // one byte short of the ARP message
  auto ipv6_target = frame;
  ipv6_target[16] = 0x86;  // protocol type 0x86dd
  ipv6_target[17] = 0xdd;
  EXPECT_FALSE(parse_arp(ipv6_target));
  auto operation = frame;
  operation[21] = 9;
  EXPECT_FALSE(parse_arp(operation));
  auto not_arp = frame;
  not_arp[13] = 0x00;  // EtherType 0x0800
  EXPECT_FALSE(parse_arp(not_arp));
}

TEST(Layer2, AnswersForItsPortAddressAndTheFunctionsAddressesOnly) {
  Layer2 l2 = two_ports();
  const auto port = l2.on_arp(0, request_from_client("10.1.0.1"), 0);
  ASSERT_TRUE(port);
  EXPECT_EQ(port->operation, ArpMessage::kReply);
  EXPECT_EQ(port->sender_mac, kPortA);
  EXPECT_EQ(port->sender_ip, test::ipv4("10.1.0.1"));
  EXPECT_EQ(port->target_mac, kClient);
  EXPECT_EQ(port->target_ip, test::ipv4("10.1.0.2"));
  const auto vip = l2.on_arp(0, request_from_client("10.1.0.100"), 0);
  ASSERT_TRUE(vip);
  EXPECT_EQ(vip->sender_ip, test::ipv4("10.1.0.100"));
  EXPECT_FALSE(l2.on_arp(0, request_from_client("10.1.0.7"), 0));  // another host's address
  EXPECT_FALSE(l2.on_arp(0, request_from_client("10.2.0.1"), 0));  // the other port's address
  EXPECT_TRUE(l2.on_arp(1, request_from_client("10.1.0.100"), 0));  // the function's, on every port
}

// A takeover's gratuitous ARP: on each port, its own address first, then the function's, each a request
// from the port's MAC for the address itself, which another port's neighbour learns nothing wrong from.
TEST(Layer2, AnnouncesEachAddressAPortAnswersForAsItsOwnSenderAndTarget) {
  const Layer2 l2 = two_ports();
  for (const std::uint16_t port : {0, 1}) {
    const std::vector<ArpMessage> sent = l2.announcements(port);
    ASSERT_EQ(sent.size(), 2u);
    EXPECT_EQ(sent[0].sender_ip, port == 0 ? test::ipv4("10.1.0.1") : test::ipv4("10.2.0.1"));
    EXPECT_EQ(sent[1].sender_ip, test::ipv4("10.1.0.100"));
    for (const ArpMessage& m : sent) {
      EXPECT_EQ(m.operation, ArpMessage::kRequest);
      EXPECT_EQ(m.sender_mac, port == 0 ? kPortA : kPortB);
      EXPECT_EQ(m.target_ip, m.sender_ip);
      EXPECT_EQ(m.target_mac, MacAddress{});
      EXPECT_TRUE(l2.owns(port, m.sender_ip));
    }
  }
}

TEST(Layer2, LearnsWhoAsksForItsAddressesButNotBystanders) {
  Layer2 l2 = two_ports();
  l2.on_arp(0, request_from_client("10.1.0.7"), 0);  // a request for someone else: not learnt
  EXPECT_EQ(l2.neighbour(test::ipv4("10.1.0.2")), nullptr);
  l2.on_arp(0, request_from_client("10.1.0.100"), 0);
  ASSERT_NE(l2.neighbour(test::ipv4("10.1.0.2")), nullptr);
  EXPECT_EQ(*l2.neighbour(test::ipv4("10.1.0.2")), kClient);
  // Once known, any ARP from it updates it (a host that changed its MAC).
  ArpMessage moved = request_from_client("10.1.0.7");
  moved.sender_mac = kBackend;
  l2.on_arp(0, moved, 1);
  EXPECT_EQ(*l2.neighbour(test::ipv4("10.1.0.2")), kBackend);
}

TEST(Layer2, AsksForAnUnknownNextHopAtMostOncePerInterval) {
  Layer2 l2 = two_ports();
  const std::uint32_t backend = test::ipv4("10.2.0.11");
  EXPECT_TRUE(l2.should_ask(backend, 1000));
  EXPECT_FALSE(l2.should_ask(backend, 1000 + Layer2::kAskInterval - 1));
  EXPECT_TRUE(l2.should_ask(backend, 1000 + Layer2::kAskInterval));
  const ArpMessage request = l2.request(1, backend);
  EXPECT_EQ(request.operation, ArpMessage::kRequest);
  EXPECT_EQ(request.sender_mac, kPortB);
  EXPECT_EQ(request.sender_ip, test::ipv4("10.2.0.1"));
  EXPECT_EQ(request.target_ip, backend);
  // Its answer is learnt (it is for the port's address), then refreshed only after kRefreshInterval.
  const Nanos learnt = 5 * kNanosPerSecond;
  l2.on_arp(1, {ArpMessage::kReply, kBackend, backend, kPortB, test::ipv4("10.2.0.1")}, learnt);
  ASSERT_NE(l2.neighbour(backend), nullptr);
  EXPECT_EQ(*l2.neighbour(backend), kBackend);
  EXPECT_FALSE(l2.should_ask(backend, learnt + Layer2::kRefreshInterval - 1));
  EXPECT_TRUE(l2.should_ask(backend, learnt + Layer2::kRefreshInterval));
}

TEST(Layer2, ConfiguredNeighboursAreNeitherAskedForNorOverwritten) {
  Layer2 l2 = two_ports();
  const std::uint32_t gateway = test::ipv4("10.2.0.254");
  l2.configure_neighbour(gateway, kBackend);
  EXPECT_FALSE(l2.should_ask(gateway, 0));
  l2.on_arp(1, {ArpMessage::kRequest, kClient, gateway, MacAddress{}, test::ipv4("10.2.0.1")}, 0);
  EXPECT_EQ(*l2.neighbour(gateway), kBackend);
}

TEST(Layer2, RoutesToTheAttachedNetworkElseToTheGateway) {
  const Layer2 l2 = two_ports();
  const auto attached = l2.route(test::ipv4("10.1.0.2"));
  ASSERT_TRUE(attached);
  EXPECT_EQ(attached->port, 0);
  EXPECT_EQ(attached->next_hop, test::ipv4("10.1.0.2"));
  const auto other = l2.route(test::ipv4("10.2.0.11"));
  ASSERT_TRUE(other);
  EXPECT_EQ(other->port, 1);
  const auto far = l2.route(test::ipv4("192.0.2.1"));
  ASSERT_TRUE(far);
  EXPECT_EQ(far->port, 1);
  EXPECT_EQ(far->next_hop, test::ipv4("10.2.0.254"));
  const Layer2 no_gateway({{kPortA, test::ipv4("10.1.0.1"), 24, 0}}, {});
  EXPECT_FALSE(no_gateway.route(test::ipv4("192.0.2.1")));
}

}  // namespace
}  // namespace flowtrack
