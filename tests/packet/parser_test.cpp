#include "flowtrack/packet/parser.hpp"

#include <gtest/gtest.h>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "frame_edits.hpp"
#include "sample_keys.hpp"
#include "support/link_headers.hpp"

namespace flowtrack {
namespace {

using testing::kTcpKey;
using testing::kUdpKey;


FlowKeyV6 v6_key(std::uint8_t protocol, std::uint16_t sport, std::uint16_t dport) {
  FlowKeyV6 key;
  key.src_addr = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  key.dst_addr = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  key.src_port = to_network16(sport);
  key.dst_port = to_network16(dport);
  key.protocol = protocol;
  return key;
}

ParseStatus parse(const std::vector<std::uint8_t>& frame, ParsedPacket& out, LinkType link = LinkType::ethernet) {
  return parse_frame(frame, link, out);
}

TEST(Parser, TcpOverEthernet) {
  auto frame = build_frame(FrameSpec::tcp4(kTcpKey, tcpflag::kSyn, 10));
  ParsedPacket pkt;
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_EQ(pkt.ip_version, 4);
  EXPECT_EQ(pkt.key4, kTcpKey);
  EXPECT_EQ(pkt.tcp_flags, tcpflag::kSyn);
  EXPECT_EQ(pkt.l3_offset, 14);
  EXPECT_EQ(pkt.l4_offset, 34);
  EXPECT_EQ(pkt.payload_offset, 54);
  EXPECT_EQ(pkt.l3_end, frame.size());
  EXPECT_TRUE(pkt.has_ports);
  EXPECT_FALSE(pkt.is_fragment);
  EXPECT_FALSE(pkt.captured_truncated);
}

TEST(Parser, UdpWithVlanAndQinQ) {
  for (std::uint8_t tags = 0; tags <= 2; ++tags) {
    FrameSpec spec = FrameSpec::udp4(kUdpKey, 4);
    spec.vlan_count = tags;
    spec.vlan_ids = {100, 200};
    auto frame = build_frame(spec);
    ParsedPacket pkt;
    ASSERT_EQ(parse(frame, pkt), ParseStatus::ok) << int(tags);
    EXPECT_EQ(pkt.vlan_count, tags);
    if (tags > 0) {
      EXPECT_EQ(pkt.vlan_ids[0], 100);
    }
    if (tags > 1) {
      EXPECT_EQ(pkt.vlan_ids[1], 200);
    }
    EXPECT_EQ(pkt.key4, kUdpKey);
    EXPECT_EQ(pkt.l3_offset, 14 + 4 * tags);
  }
}

TEST(Parser, EveryTagProtocolIsAcceptedInEitherPosition) {
  // 802.1ad (0x88a8), the pre-standard 0x9100, and plain 802.1Q (0x8100) as the outer tag.
  for (const std::uint16_t outer : {0x88a8, 0x9100, 0x8100}) {
    FrameSpec spec = FrameSpec::udp4(kUdpKey, 4);
    spec.vlan_count = 2;
    spec.vlan_ids = {300, 400};
    auto frame = build_frame(spec);
    store_be16(frame.data() + 12, outer);
    ParsedPacket pkt;
    ASSERT_EQ(parse(frame, pkt), ParseStatus::ok) << std::hex << outer;
    EXPECT_EQ(pkt.vlan_count, 2);
    EXPECT_EQ(pkt.vlan_ids[0], 300);
    EXPECT_EQ(pkt.vlan_ids[1], 400);
    EXPECT_EQ(pkt.key4, kUdpKey);
  }
}

TEST(Parser, RawIpAndCookedCaptures) {
  FrameSpec spec = FrameSpec::tcp4(kTcpKey, tcpflag::kAck);
  spec.ethernet = false;
  auto ip = build_frame(spec);
  ParsedPacket pkt;
  ASSERT_EQ(parse(ip, pkt, LinkType::raw_ip), ParseStatus::ok);
  EXPECT_EQ(pkt.key4, kTcpKey);
  EXPECT_EQ(pkt.l3_offset, 0);

  std::vector<std::uint8_t> sll(16, 0);
  store_be16(sll.data() + 14, 0x0800);
  sll.insert(sll.end(), ip.begin(), ip.end());
  ASSERT_EQ(parse(sll, pkt, LinkType::linux_sll), ParseStatus::ok);
  EXPECT_EQ(pkt.key4, kTcpKey);
  EXPECT_EQ(pkt.l3_offset, 16);

  std::vector<std::uint8_t> sll2(20, 0);
  store_be16(sll2.data(), 0x0800);
  sll2.insert(sll2.end(), ip.begin(), ip.end());
  ASSERT_EQ(parse(sll2, pkt, LinkType::linux_sll2), ParseStatus::ok);
  EXPECT_EQ(pkt.key4, kTcpKey);
  EXPECT_EQ(pkt.l3_offset, 20);
}

// Every link type the pcap reader accepts: the IP packet found behind its header, IPv4 and IPv6.
TEST(Parser, EveryLinkTypeFindsTheIpPacketBehindItsHeader) {
  FrameSpec spec4 = FrameSpec::tcp4(kTcpKey, tcpflag::kAck);
  spec4.ethernet = false;
  const auto ip4 = build_frame(spec4);
  const FlowKeyV6 key6 = v6_key(ipproto::kUdp, 5353, 53);
  FrameSpec spec6;
  spec6.ethernet = false;
  spec6.ip_version = 6;
  spec6.key6 = key6;
  const auto ip6 = build_frame(spec6);
  for (const LinkType link : kLinkTypes) {
    if (link == LinkType::ethernet) continue;
    SCOPED_TRACE(static_cast<int>(link));
    const auto frame4 = testing::behind_link_header(link, ip4);
    ParsedPacket pkt;
    ASSERT_EQ(parse(frame4, pkt, link), ParseStatus::ok);
    EXPECT_EQ(pkt.key4, kTcpKey);
    EXPECT_EQ(pkt.l3_offset, frame4.size() - ip4.size());
    const auto frame6 = testing::behind_link_header(link, ip6);
    ASSERT_EQ(parse(frame6, pkt, link), ParseStatus::ok);
    EXPECT_EQ(pkt.key6, key6);
  }
}

// BSD NULL carries the address family in the capturing host's byte order, either one; PPP may omit the
// HDLC address and control bytes and shorten the protocol to one byte (RFC 1661 section 6.5, 6.6).
TEST(Parser, BsdNullInEitherByteOrderAndCompressedPppHeaders) {
  FrameSpec spec = FrameSpec::tcp4(kTcpKey, tcpflag::kAck);
  spec.ethernet = false;
  const auto ip = build_frame(spec);
  ParsedPacket pkt;
  for (const std::vector<std::uint8_t>& header : {std::vector<std::uint8_t>{2, 0, 0, 0}, std::vector<std::uint8_t>{0, 0, 0, 2}}) {
    auto frame = header;
    frame.insert(frame.end(), ip.begin(), ip.end());
    ASSERT_EQ(parse(frame, pkt, LinkType::bsd_null), ParseStatus::ok);
    EXPECT_EQ(pkt.key4, kTcpKey);
  }
  for (const std::vector<std::uint8_t>& header :
       {std::vector<std::uint8_t>{0x00, 0x21}, std::vector<std::uint8_t>{0x21}, std::vector<std::uint8_t>{0xff, 0x03, 0x21}}) {
    auto frame = header;
    frame.insert(frame.end(), ip.begin(), ip.end());
    ASSERT_EQ(parse(frame, pkt, LinkType::ppp), ParseStatus::ok);
    EXPECT_EQ(pkt.key4, kTcpKey);
    EXPECT_EQ(pkt.l3_offset, header.size());
  }
}

TEST(Parser, Ipv4OptionsAreSkipped) {
  auto frame = build_frame(FrameSpec::tcp4(kTcpKey, tcpflag::kSyn));
  test::add_ipv4_options(frame, 14, 2);
  ParsedPacket pkt;
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_EQ(pkt.l4_offset, 42);
  EXPECT_EQ(pkt.key4, kTcpKey);
}

TEST(Parser, Ipv4Fragments) {
  auto frame = build_frame(FrameSpec::udp4(kUdpKey, 16));
  test::set_ipv4_fragment(frame, 14, 0x1234, 0, true);
  ParsedPacket pkt;
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_TRUE(pkt.is_fragment);
  EXPECT_TRUE(pkt.has_ports);
  EXPECT_TRUE(pkt.more_fragments);
  EXPECT_EQ(pkt.ip_id, 0x1234u);

  test::set_ipv4_fragment(frame, 14, 0x1234, 24, false);
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_TRUE(pkt.is_fragment);
  EXPECT_FALSE(pkt.has_ports);
  EXPECT_EQ(pkt.fragment_offset, 24);
  EXPECT_EQ(pkt.key4.src_port, 0);
  EXPECT_EQ(pkt.key4.protocol, ipproto::kUdp);
  EXPECT_EQ(pkt.l4_offset, 0);
}

TEST(Parser, IcmpEchoUsesIdentifierAsPorts) {
  FrameSpec spec;
  spec.key4 = FlowKeyV4::from_host(0x0a000001, 0x08080808, 777, 777, ipproto::kIcmp);
  spec.icmp_type = 8;
  auto frame = build_frame(spec);
  ParsedPacket pkt;
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_TRUE(pkt.icmp_is_query);
  EXPECT_EQ(pkt.key4.src_port, to_network16(777));
  EXPECT_EQ(pkt.key4.dst_port, to_network16(777));
}

TEST(Parser, IcmpErrorCarriesTheEmbeddedKey) {
  auto original = build_frame(FrameSpec::udp4(kUdpKey, 20));
  FrameSpec spec;
  spec.key4 = FlowKeyV4::from_host(0xc6120035, 0x0a000002, 0, 0, ipproto::kIcmp);
  spec.icmp_type = 3;
  spec.icmp_code = 3;
  spec.icmp_quoted = std::span<const std::uint8_t>(original).subspan(14, 28);  // IP header + 8 bytes
  auto frame = build_frame(spec);
  ParsedPacket pkt;
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_TRUE(pkt.icmp_is_error);
  ASSERT_TRUE(pkt.has_embedded);
  EXPECT_EQ(pkt.embedded_key4, kUdpKey);
  EXPECT_EQ(pkt.embedded_l3_offset, 42);
  EXPECT_EQ(pkt.embedded_l4_offset, 62);
  EXPECT_FALSE(pkt.has_ports);

  // Quoting fewer than 8 transport bytes leaves the error valid but without an embedded key.
  spec.icmp_quoted = std::span<const std::uint8_t>(original).subspan(14, 24);
  frame = build_frame(spec);
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_FALSE(pkt.has_embedded);
}

TEST(Parser, Ipv6TcpAndExtensionChain) {
  FrameSpec spec;
  spec.ip_version = 6;
  spec.key6 = v6_key(ipproto::kTcp, 1111, 80);
  spec.tcp_flags = tcpflag::kSyn;
  auto frame = build_frame(spec);
  ParsedPacket pkt;
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_EQ(pkt.ip_version, 6);
  EXPECT_EQ(pkt.key6, spec.key6);
  EXPECT_EQ(pkt.l4_offset, 54);

  // Hop-by-hop (8 bytes), routing (16 bytes), destination options (8 bytes), then TCP.
  test::insert_ipv6_extension(frame, 14, test::ipv6ext::kDestinationOptions, std::vector<std::uint8_t>(6, 0));
  test::insert_ipv6_extension(frame, 14, test::ipv6ext::kRouting, std::vector<std::uint8_t>(14, 0));
  test::insert_ipv6_extension(frame, 14, test::ipv6ext::kHopByHop, std::vector<std::uint8_t>(6, 0));
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_EQ(pkt.key6, spec.key6);
  EXPECT_EQ(pkt.l4_offset, 54 + 32);
  EXPECT_EQ(pkt.tcp_flags, tcpflag::kSyn);
  EXPECT_FALSE(pkt.is_fragment);
}

TEST(Parser, Ipv6AuthenticationHeaderCountsFourByteWords) {
  FrameSpec spec;
  spec.ip_version = 6;
  spec.key6 = v6_key(ipproto::kUdp, 500, 4500);
  auto frame = build_frame(spec);
  // AH with a 12-byte integrity check value: 24 bytes, length field (24 / 4) - 2 = 4. Read in 8-byte units
  // like the other extensions, it would be 40 bytes long and run past the end of the packet.
  test::insert_ipv6_extension(frame, 14, test::ipv6ext::kAuthentication, std::vector<std::uint8_t>(22, 0));
  ASSERT_EQ(frame[14 + 40 + 1], 4);
  ParsedPacket pkt;
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_EQ(pkt.l4_offset, 54 + 24);
  EXPECT_EQ(pkt.key6, spec.key6);
}

TEST(Parser, Ipv6Fragments) {
  FrameSpec spec;
  spec.ip_version = 6;
  spec.key6 = v6_key(ipproto::kUdp, 1000, 2000);
  spec.payload_bytes = 8;
  const auto whole = build_frame(spec);

  auto first = whole;
  test::insert_ipv6_extension(first, 14, test::ipv6ext::kFragment, test::ipv6_fragment_body(0xdeadbeef, 0, true));
  ParsedPacket pkt;
  ASSERT_EQ(parse(first, pkt), ParseStatus::ok);
  EXPECT_TRUE(pkt.is_fragment);
  EXPECT_TRUE(pkt.more_fragments);
  EXPECT_TRUE(pkt.has_ports);
  EXPECT_EQ(pkt.ip_id, 0xdeadbeefu);
  EXPECT_EQ(pkt.key6, spec.key6);

  // A later fragment: what follows the fragment header is payload, even if it looks like a header (here
  // the destination options header that preceded UDP in the original packet).
  auto later = whole;
  test::insert_ipv6_extension(later, 14, test::ipv6ext::kDestinationOptions, std::vector<std::uint8_t>(6, 0));
  test::insert_ipv6_extension(later, 14, test::ipv6ext::kFragment, test::ipv6_fragment_body(7, 16, false));
  ASSERT_EQ(parse(later, pkt), ParseStatus::ok);
  EXPECT_TRUE(pkt.is_fragment);
  EXPECT_FALSE(pkt.has_ports);
  EXPECT_EQ(pkt.fragment_offset, 16);
  EXPECT_EQ(pkt.key6.protocol, test::ipv6ext::kDestinationOptions);
  EXPECT_EQ(pkt.key6.src_port, 0);
  EXPECT_EQ(pkt.l4_offset, 0);

  // An atomic fragment (offset 0, no more fragments) is a whole packet (RFC 6946).
  auto atomic = whole;
  test::insert_ipv6_extension(atomic, 14, test::ipv6ext::kFragment, test::ipv6_fragment_body(9, 0, false));
  ASSERT_EQ(parse(atomic, pkt), ParseStatus::ok);
  EXPECT_FALSE(pkt.is_fragment);
  EXPECT_TRUE(pkt.has_ports);
  EXPECT_EQ(pkt.key6, spec.key6);
}

TEST(Parser, Icmpv6EchoAndError) {
  FrameSpec echo;
  echo.ip_version = 6;
  echo.key6 = v6_key(ipproto::kIcmpV6, 99, 99);
  echo.icmp_type = 128;
  auto frame = build_frame(echo);
  ParsedPacket pkt;
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_TRUE(pkt.icmp_is_query);
  EXPECT_EQ(pkt.key6.src_port, to_network16(99));

  FrameSpec original;
  original.ip_version = 6;
  original.key6 = v6_key(ipproto::kTcp, 5000, 80);
  auto original_frame = build_frame(original);
  FrameSpec error;
  error.ip_version = 6;
  error.key6 = v6_key(ipproto::kIcmpV6, 0, 0);
  error.icmp_type = 1;
  error.icmp_quoted = std::span<const std::uint8_t>(original_frame).subspan(14);
  frame = build_frame(error);
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_TRUE(pkt.icmp_is_error);
  ASSERT_TRUE(pkt.has_embedded);
  EXPECT_EQ(pkt.embedded_key6, original.key6);
}

TEST(Parser, SnaplenCutAndEthernetPadding) {
  auto frame = build_frame(FrameSpec::udp4(kUdpKey, 100));
  ParsedPacket pkt;
  std::vector<std::uint8_t> cut(frame.begin(), frame.begin() + 60);
  ASSERT_EQ(parse(cut, pkt), ParseStatus::ok);
  EXPECT_TRUE(pkt.captured_truncated);
  EXPECT_EQ(pkt.l3_end, 60);

  auto small = build_frame(FrameSpec::udp4(kUdpKey, 0));
  small.resize(60, 0);  // padded to the Ethernet minimum
  ASSERT_EQ(parse(small, pkt), ParseStatus::ok);
  EXPECT_FALSE(pkt.captured_truncated);
  EXPECT_EQ(pkt.l3_end, 14 + 28);
}

}  // namespace
}  // namespace flowtrack
