// The tunnels of the load balancers' tunnel mode (nf/tunnel.hpp), byte by byte: the outer headers IPIP
// and GUE put before a packet that stays as it was, the GUE source port of a flow, the packets too big
// for the path (counted; with DF answered by ICMP naming the MTU that fits), buffers with headroom (the
// frame starts earlier), with room after the packet only (the packet moves up) and with neither (a
// drop), and the backend's side (the inner packet taken off, malformed outer packets refused).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/nf/tunnel.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "support/checksum_oracle.hpp"

namespace flowtrack {
namespace tunnel_test {

constexpr std::uint32_t kClient = 0x0a000001, kVip = 0xc6120001, kSource = 0x0a0a0201, kBackend = 0x0a0a020c;
const FlowKeyV4 kToVip = FlowKeyV4::from_host(kClient, kVip, 40000, 443, ipproto::kTcp);

TunnelConfig tunnel(ForwardMode mode, std::uint16_t mtu = 1500) {
  TunnelConfig t;
  t.mode = mode;
  t.source = to_network32(kSource);
  t.mtu = mtu;
  return t;
}

// A frame in a buffer with `headroom` bytes before it and `room` bytes after it, parsed, as a source
// hands packets to a function.
struct Buffer {
  std::vector<std::uint8_t> bytes;
  NfPacket packet;

  Buffer(const FrameSpec& spec, std::size_t room, std::uint16_t headroom = 0) : bytes(headroom, 0xee) {
    const std::vector<std::uint8_t> frame = build_frame(spec);
    bytes.insert(bytes.end(), frame.begin(), frame.end());
    bytes.resize(bytes.size() + room, 0xee);
    packet = {std::span(bytes).subspan(headroom, frame.size()), {}, static_cast<std::uint32_t>(frame.size()), frame.size() + room};
    packet.headroom = headroom;
    packet.hash = flow_hash(spec.key4);
    EXPECT_EQ(parse_frame(packet.frame, LinkType::ethernet, packet.parsed), ParseStatus::ok);
  }
  std::vector<std::uint8_t> frame() const { return {packet.frame.begin(), packet.frame.end()}; }
};

// The buffers a tunnel's headers fit in: headroom (the frame starts earlier; as the replay's and DPDK's
// buffers have it), and only room after the frame (the packet moves up).
struct Layout {
  std::uint16_t headroom;
  std::size_t room;
};
constexpr Layout kLayouts[] = {{.headroom = 64, .room = 0}, {.headroom = 0, .room = 64}};

TEST(Tunnel, IpipPutsAnOuterHeaderToTheBackendBeforeTheUnchangedPacket) {
  for (const Layout layout : kLayouts) {
    SCOPED_TRACE(layout.headroom);
    Buffer b(FrameSpec::tcp4(kToVip, tcpflag::kSyn, 100), layout.room, layout.headroom);
    const std::vector<std::uint8_t> before = b.frame();
    const std::uint32_t wire = b.packet.wire_length;
    ASSERT_EQ(encapsulate(b.packet, tunnel(ForwardMode::ipip), to_network32(kBackend), b.packet.hash), TunnelOutcome::sent);
    const std::vector<std::uint8_t> after = b.frame();
    ASSERT_EQ(after.size(), before.size() + 20);
    EXPECT_EQ(b.packet.wire_length, wire + 20);
    EXPECT_TRUE(std::equal(before.begin(), before.begin() + 14, after.begin()));  // the link header, first still
    EXPECT_TRUE(std::equal(before.begin() + 14, before.end(), after.begin() + 34));  // the packet, byte for byte

    ParsedPacket outer;
    ASSERT_EQ(parse_frame(after, LinkType::ethernet, outer), ParseStatus::ok);
    EXPECT_TRUE(testing::ipv4_header_valid(after, outer));
    EXPECT_EQ(outer.key4.protocol, 4);
    EXPECT_EQ(outer.key4.src_addr, to_network32(kSource));
    EXPECT_EQ(outer.key4.dst_addr, to_network32(kBackend));
    EXPECT_EQ(outer.ip_total_length, before.size() - 14 + 20);
    EXPECT_EQ(load_be16(after.data() + 14 + 6), 0x4000);  // DF, no fragment
    // What the backend takes off is what the client sent.
    const auto inner = ipip_inner(std::span(after).subspan(14));
    EXPECT_TRUE(std::equal(inner.begin(), inner.end(), before.begin() + 14, before.end()));
    EXPECT_EQ(inner.size(), before.size() - 14);
  }
}

TEST(Tunnel, GueSendsTheUnchangedPacketInUdpToTheTunnelPortFromAPortOfTheFlow) {
  for (const Layout layout : kLayouts) {
    SCOPED_TRACE(layout.headroom);
    Buffer b(FrameSpec::udp4(FlowKeyV4::from_host(kClient, kVip, 40000, 53, ipproto::kUdp), 60), layout.room, layout.headroom);
    const std::vector<std::uint8_t> before = b.frame();
    TunnelConfig t = tunnel(ForwardMode::gue);
    t.gue_port = to_network16(9999);
    ASSERT_EQ(encapsulate(b.packet, t, to_network32(kBackend), b.packet.hash), TunnelOutcome::sent);
    const std::vector<std::uint8_t> after = b.frame();
    ASSERT_EQ(after.size(), before.size() + 28);
    EXPECT_TRUE(std::equal(before.begin(), before.begin() + 14, after.begin()));
    EXPECT_TRUE(std::equal(before.begin() + 14, before.end(), after.begin() + 42));

    ParsedPacket outer;
    ASSERT_EQ(parse_frame(after, LinkType::ethernet, outer), ParseStatus::ok);
    EXPECT_TRUE(testing::ipv4_header_valid(after, outer));
    EXPECT_EQ(outer.key4.protocol, ipproto::kUdp);
    EXPECT_EQ(outer.key4.src_addr, to_network32(kSource));
    EXPECT_EQ(outer.key4.dst_addr, to_network32(kBackend));
    EXPECT_EQ(outer.key4.dst_port, to_network16(9999));
    EXPECT_EQ(outer.key4.src_port, gue_source_port(b.packet.hash));
    EXPECT_EQ(load_be16(after.data() + 34 + 4), before.size() - 14 + 8);  // the UDP length
    EXPECT_EQ(load_be16(after.data() + 34 + 6), 0);                       // no checksum
    const auto inner = gue_inner(std::span(after).subspan(42));
    EXPECT_TRUE(std::equal(inner.begin(), inner.end(), before.begin() + 14, before.end()));
    EXPECT_EQ(inner.size(), before.size() - 14);
  }
}

// In the headroom the IP packet is not moved: the frame starts the overhead earlier, the headroom left
// and the room from the frame's new start account for it, and nothing past the packet is written.
TEST(Tunnel, WithHeadroomTheFrameStartsEarlierAndThePacketStaysWhereItLies) {
  for (const ForwardMode mode : {ForwardMode::ipip, ForwardMode::gue}) {
    const std::size_t overhead = tunnel_overhead(mode);
    Buffer b(FrameSpec::tcp4(kToVip, tcpflag::kAck, 200), 16, 40);
    const std::uint8_t* const ip = b.packet.frame.data() + 14;
    const std::uint8_t* const start = b.packet.frame.data();
    const std::size_t end_of_room = b.packet.room();
    ASSERT_EQ(encapsulate(b.packet, tunnel(mode), to_network32(kBackend), b.packet.hash), TunnelOutcome::sent);
    EXPECT_EQ(b.packet.frame.data(), start - overhead);
    EXPECT_EQ(b.packet.frame.data() + 14 + overhead, ip);
    EXPECT_EQ(std::size_t{b.packet.headroom}, 40 - overhead);
    EXPECT_EQ(b.packet.room(), end_of_room + overhead);  // the buffer's end stays
    EXPECT_TRUE(std::all_of(b.bytes.end() - 16, b.bytes.end(), [](std::uint8_t x) { return x == 0xee; }));
  }
}

// A link header longer than Ethernet's (two VLAN tags: 22 bytes, more than IPIP's 20 it moves down by)
// comes down whole, ahead of the outer header.
TEST(Tunnel, ATaggedLinkHeaderMovesDownWholeIntoTheHeadroom) {
  FrameSpec spec = FrameSpec::tcp4(kToVip, tcpflag::kAck, 50);
  spec.vlan_count = 2;
  spec.vlan_ids = {100, 200};
  Buffer b(spec, 0, 64);
  ASSERT_EQ(b.packet.parsed.l3_offset, 22);
  const std::vector<std::uint8_t> before = b.frame();
  ASSERT_EQ(encapsulate(b.packet, tunnel(ForwardMode::ipip), to_network32(kBackend), b.packet.hash), TunnelOutcome::sent);
  const std::vector<std::uint8_t> after = b.frame();
  ASSERT_EQ(after.size(), before.size() + 20);
  EXPECT_TRUE(std::equal(before.begin(), before.begin() + 22, after.begin()));
  EXPECT_TRUE(std::equal(before.begin() + 22, before.end(), after.begin() + 42));
  ParsedPacket outer;
  ASSERT_EQ(parse_frame(after, LinkType::ethernet, outer), ParseStatus::ok);
  EXPECT_EQ(outer.vlan_count, 2);
  EXPECT_EQ(outer.key4.protocol, 4);
  EXPECT_EQ(outer.key4.dst_addr, to_network32(kBackend));
}

// Headroom too small for the headers but room after the packet: the packet moves up, as without any.
TEST(Tunnel, HeadroomSmallerThanTheHeadersFallsBackOnTheRoomAfterThePacket) {
  Buffer b(FrameSpec::tcp4(kToVip, tcpflag::kAck, 10), 64, 20);
  const std::vector<std::uint8_t> before = b.frame();
  const std::uint8_t* const start = b.packet.frame.data();
  ASSERT_EQ(encapsulate(b.packet, tunnel(ForwardMode::gue), to_network32(kBackend), b.packet.hash), TunnelOutcome::sent);
  EXPECT_EQ(b.packet.frame.data(), start);
  EXPECT_EQ(b.packet.headroom, 20);
  EXPECT_TRUE(std::equal(before.begin() + 14, before.end(), b.packet.frame.begin() + 42));
}

TEST(Tunnel, TheOuterHeaderCopiesTheTrafficClass) {
  Buffer b(FrameSpec::tcp4(kToVip, tcpflag::kAck, 10), 64);
  b.packet.frame[15] = 0xb9;  // DSCP 46 (expedited forwarding) and ECT(1), as the client marked it
  ASSERT_EQ(encapsulate(b.packet, tunnel(ForwardMode::ipip), to_network32(kBackend), 0), TunnelOutcome::sent);
  EXPECT_EQ(b.packet.frame[15], 0xb9);
}

TEST(Tunnel, GueSourcePortsAreConstantPerFlowAndSpreadAcrossFlows) {
  std::set<std::uint16_t> ports;
  constexpr int kFlows = 1000;
  for (int i = 0; i < kFlows; ++i) {
    // Clients on consecutive ports of one address: the keys differ in a few bits only.
    const FlowKeyV4 key = FlowKeyV4::from_host(kClient, kVip, static_cast<std::uint16_t>(32768 + i), 443, ipproto::kTcp);
    const std::uint16_t port = gue_source_port(flow_hash(key));
    EXPECT_EQ(port, gue_source_port(flow_hash(key)));
    EXPECT_GE(to_host16(port), 32768);
    ports.insert(port);
  }
  EXPECT_GE(ports.size(), kFlows * 97 / 100);
}

TEST(Tunnel, APacketTooBigForThePathIsCountedAndWithDfAnsweredWithTheMtuThatFits) {
  for (const ForwardMode mode : {ForwardMode::ipip, ForwardMode::gue}) {
    const std::size_t overhead = tunnel_overhead(mode);
    // 1500 bytes of IP: too big for a 1500-byte path once encapsulated.
    Buffer big(FrameSpec::tcp4(kToVip, tcpflag::kAck, 1460), 256);
    ASSERT_EQ(big.packet.parsed.ip_total_length, 1500);
    big.packet.frame[14 + 6] |= 0x40;  // DF, as a TCP stack doing path MTU discovery sets it
    big.packet.frame[14 + 10] = big.packet.frame[14 + 11] = 0;
    store_be16(big.packet.frame.data() + 24, ipv4_header_checksum({big.packet.frame.data() + 14, 20}));
    NfCounters counters;
    ASSERT_EQ(send_through_tunnel(big.packet, tunnel(mode), to_network32(kBackend), counters), Verdict::reply);
    EXPECT_EQ(counters.drops[static_cast<std::size_t>(NfDrop::too_big)], 1u);
    EXPECT_EQ(counters.forwarded, 0u);
    const std::vector<std::uint8_t> answer = big.frame();
    ParsedPacket icmp;
    ASSERT_EQ(parse_frame(answer, LinkType::ethernet, icmp), ParseStatus::ok);
    EXPECT_TRUE(testing::ipv4_header_valid(answer, icmp));
    EXPECT_TRUE(testing::transport_valid(answer, icmp));
    EXPECT_EQ(icmp.icmp_type, 3);
    EXPECT_EQ(icmp.icmp_code, 4);
    EXPECT_EQ(icmp.key4.src_addr, kToVip.dst_addr);  // from the VIP the client sent to
    EXPECT_EQ(icmp.key4.dst_addr, kToVip.src_addr);
    EXPECT_EQ(load_be16(answer.data() + 34 + 6), 1500 - overhead);  // the next-hop MTU
    ASSERT_TRUE(icmp.has_embedded);
    EXPECT_EQ(icmp.embedded_key4, kToVip);

    // Without DF: dropped and counted, never fragmented.
    Buffer no_df(FrameSpec::tcp4(kToVip, tcpflag::kAck, 1460), 256);
    ASSERT_EQ(send_through_tunnel(no_df.packet, tunnel(mode), to_network32(kBackend), counters), Verdict::drop);
    EXPECT_EQ(counters.drops[static_cast<std::size_t>(NfDrop::too_big)], 2u);

    // The largest packet that fits goes.
    Buffer fits(FrameSpec::tcp4(kToVip, tcpflag::kAck, static_cast<std::uint16_t>(1460 - overhead)), 256);
    EXPECT_EQ(send_through_tunnel(fits.packet, tunnel(mode), to_network32(kBackend), counters), Verdict::forward);
    EXPECT_EQ(fits.packet.frame.size(), 14u + 1500);
  }
}

TEST(Tunnel, ABufferWithoutRoomForTheOuterHeadersIsADrop) {
  Buffer b(FrameSpec::tcp4(kToVip, tcpflag::kAck, 10), 19, 19);  // 19 bytes before, 19 after: IPIP takes 20
  const std::vector<std::uint8_t> before = b.frame();
  const std::uint8_t* const start = b.packet.frame.data();
  NfCounters counters;
  EXPECT_FALSE(reaches_backend(b.packet, tunnel(ForwardMode::ipip)));
  EXPECT_EQ(send_through_tunnel(b.packet, tunnel(ForwardMode::ipip), to_network32(kBackend), counters), Verdict::drop);
  EXPECT_EQ(counters.drops[static_cast<std::size_t>(NfDrop::no_room)], 1u);
  EXPECT_EQ(b.packet.frame.data(), start);
  EXPECT_EQ(b.frame(), before);
}

TEST(Tunnel, TheBackendSideRefusesWhatIsNotAWholeInnerPacket) {
  Buffer b(FrameSpec::tcp4(kToVip, tcpflag::kAck, 40), 64);
  ASSERT_EQ(encapsulate(b.packet, tunnel(ForwardMode::ipip), to_network32(kBackend), 0), TunnelOutcome::sent);
  const std::vector<std::uint8_t> outer(b.packet.frame.begin() + 14, b.packet.frame.end());
  ASSERT_FALSE(ipip_inner(outer).empty());
  auto broken = [&](auto&& edit) {
    std::vector<std::uint8_t> copy = outer;
    edit(copy);
    return ipip_inner(copy).empty();
  };
  EXPECT_TRUE(broken([](auto& o) { o[9] = ipproto::kUdp; }));            // not IPIP
  EXPECT_TRUE(broken([](auto& o) { o[0] = 0x65; }));                     // not IPv4
  EXPECT_TRUE(broken([](auto& o) { o[0] = 0x44; }));                     // a header shorter than 20 bytes
  EXPECT_TRUE(broken([](auto& o) { store_be16(o.data() + 6, 0x2000); }));  // a fragment
  EXPECT_TRUE(broken([](auto& o) { store_be16(o.data() + 2, static_cast<std::uint16_t>(o.size() + 1)); }));  // cut
  EXPECT_TRUE(broken([](auto& o) { store_be16(o.data() + 22, static_cast<std::uint16_t>(o.size())); }));  // inner cut
  EXPECT_TRUE(broken([](auto& o) { o.resize(30); }));
  EXPECT_TRUE(gue_inner(std::span(outer).first(10)).empty());
  EXPECT_TRUE(gue_inner(std::vector<std::uint8_t>{0x60, 0, 0, 0}).empty());
  // Trailing bytes (an Ethernet pad) are not the inner packet's.
  std::vector<std::uint8_t> padded = outer;
  padded.resize(padded.size() + 6, 0);
  EXPECT_EQ(ipip_inner(padded).size(), outer.size() - 20);
}

TEST(Tunnel, ModeNames) {
  for (const ForwardMode mode : {ForwardMode::nat, ForwardMode::ipip, ForwardMode::gue}) {
    EXPECT_EQ(forward_mode_from_name(forward_mode_name(mode)), mode);
  }
  EXPECT_FALSE(forward_mode_from_name("gre"));
}

}  // namespace tunnel_test
}  // namespace flowtrack
