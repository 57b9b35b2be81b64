#include "flowtrack/packet/parser.hpp"

#include <gtest/gtest.h>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/frame_builder.hpp"

namespace flowtrack {
namespace {

const FlowKeyV4 kTcpKey = FlowKeyV4::from_host(0x0a000001, 0xc6120005, 40000, 443, ipproto::kTcp);
const FlowKeyV4 kUdpKey = FlowKeyV4::from_host(0x0a000002, 0xc6120035, 5353, 53, ipproto::kUdp);

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

TEST(Parser, ThreeVlanTagsAreRejected) {
  FrameSpec spec = FrameSpec::udp4(kUdpKey);
  spec.vlan_count = 2;
  auto frame = build_frame(spec);
  // Insert a third tag after the two built ones.
  const std::uint8_t tag[4] = {0x81, 0x00, 0x00, 0x07};
  frame.insert(frame.begin() + 20, tag, tag + 4);
  store_be16(frame.data() + 20, 0x8100);
  ParsedPacket pkt;
  EXPECT_EQ(parse(frame, pkt), ParseStatus::too_many_vlan_tags);
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

  store_be16(sll2.data(), 0x0806);
  EXPECT_EQ(parse(sll2, pkt, LinkType::linux_sll2), ParseStatus::unsupported_link_protocol);
  ip[0] = 0x55;
  EXPECT_EQ(parse(ip, pkt, LinkType::raw_ip), ParseStatus::bad_ip_version);
}

TEST(Parser, Ipv4OptionsAreSkipped) {
  auto frame = build_frame(FrameSpec::tcp4(kTcpKey, tcpflag::kSyn));
  // Grow the header by 8 bytes of NOP options.
  frame.insert(frame.begin() + 34, 8, 0x01);
  frame[14] = 0x47;
  store_be16(frame.data() + 16, static_cast<std::uint16_t>(load_be16(frame.data() + 16) + 8));
  ParsedPacket pkt;
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_EQ(pkt.l4_offset, 42);
  EXPECT_EQ(pkt.key4, kTcpKey);
}

TEST(Parser, Ipv4Fragments) {
  auto frame = build_frame(FrameSpec::udp4(kUdpKey, 16));
  store_be16(frame.data() + 18, 0x1234);  // identification
  store_be16(frame.data() + 20, 0x2000);  // first fragment, more to come
  ParsedPacket pkt;
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_TRUE(pkt.is_fragment);
  EXPECT_TRUE(pkt.has_ports);
  EXPECT_TRUE(pkt.more_fragments);
  EXPECT_EQ(pkt.ip_id, 0x1234u);

  store_be16(frame.data() + 20, 0x0003);  // offset 24 bytes, last fragment
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

  // Insert hop-by-hop (8 bytes), routing (16 bytes) and destination options (8 bytes) headers.
  std::vector<std::uint8_t> hop = {43, 0, 1, 4, 0, 0, 0, 0};
  std::vector<std::uint8_t> routing(16, 0);
  routing[0] = 60;
  routing[1] = 1;
  std::vector<std::uint8_t> dest = {6, 0, 1, 4, 0, 0, 0, 0};
  std::vector<std::uint8_t> ext;
  ext.insert(ext.end(), hop.begin(), hop.end());
  ext.insert(ext.end(), routing.begin(), routing.end());
  ext.insert(ext.end(), dest.begin(), dest.end());
  frame.insert(frame.begin() + 54, ext.begin(), ext.end());
  frame[20] = 0;  // next header: hop-by-hop
  store_be16(frame.data() + 18, static_cast<std::uint16_t>(load_be16(frame.data() + 18) + ext.size()));
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_EQ(pkt.key6, spec.key6);
  EXPECT_EQ(pkt.l4_offset, 54 + ext.size());

  // Cut inside the routing header.
  std::vector<std::uint8_t> cut(frame.begin(), frame.begin() + 54 + 12);
  EXPECT_EQ(parse(cut, pkt), ParseStatus::truncated_ipv6_extension);
}

TEST(Parser, Ipv6Fragments) {
  FrameSpec spec;
  spec.ip_version = 6;
  spec.key6 = v6_key(ipproto::kUdp, 1000, 2000);
  spec.payload_bytes = 8;
  auto frame = build_frame(spec);
  std::vector<std::uint8_t> fragment = {17, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef};
  store_be16(fragment.data() + 2, 0x0001);  // offset 0, more fragments
  frame.insert(frame.begin() + 54, fragment.begin(), fragment.end());
  frame[20] = 44;
  store_be16(frame.data() + 18, static_cast<std::uint16_t>(load_be16(frame.data() + 18) + 8));
  ParsedPacket pkt;
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_TRUE(pkt.is_fragment);
  EXPECT_TRUE(pkt.has_ports);
  EXPECT_EQ(pkt.ip_id, 0xdeadbeefu);
  EXPECT_EQ(pkt.key6, spec.key6);

  store_be16(frame.data() + 56, 0x0010);  // offset 16 bytes, last
  ASSERT_EQ(parse(frame, pkt), ParseStatus::ok);
  EXPECT_FALSE(pkt.has_ports);
  EXPECT_EQ(pkt.fragment_offset, 16);
  EXPECT_EQ(pkt.key6.protocol, ipproto::kUdp);
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

TEST(Parser, EveryTruncationIsReportedNotOverread) {
  // Cutting a valid frame at every length gives a status, never a read past the buffer (ASan checks),
  // and never ok before the transport header is whole.
  std::vector<std::vector<std::uint8_t>> frames;
  frames.push_back(build_frame(FrameSpec::tcp4(kTcpKey, tcpflag::kAck, 5)));
  frames.push_back(build_frame(FrameSpec::udp4(kUdpKey, 5)));
  FrameSpec v6;
  v6.ip_version = 6;
  v6.key6 = v6_key(ipproto::kTcp, 1, 2);
  frames.push_back(build_frame(v6));
  for (const auto& frame : frames) {
    ParsedPacket whole;
    ASSERT_EQ(parse(frame, whole), ParseStatus::ok);
    for (std::size_t len = 0; len < whole.payload_offset; ++len) {
      std::vector<std::uint8_t> cut(frame.begin(), frame.begin() + len);  // exact-size heap buffer
      ParsedPacket pkt;
      EXPECT_NE(parse(cut, pkt), ParseStatus::ok) << "len " << len;
    }
  }
}

TEST(Parser, MalformedHeaders) {
  ParsedPacket pkt;
  auto frame = build_frame(FrameSpec::tcp4(kTcpKey, 0));
  auto bad = frame;
  bad[14] = 0x65;
  EXPECT_EQ(parse(bad, pkt), ParseStatus::bad_ipv4_version);
  bad = frame;
  bad[14] = 0x44;
  EXPECT_EQ(parse(bad, pkt), ParseStatus::bad_ipv4_header_length);
  bad = frame;
  store_be16(bad.data() + 16, 10);
  EXPECT_EQ(parse(bad, pkt), ParseStatus::bad_ipv4_total_length);
  bad = frame;
  bad[14 + 20 + 12] = 0x30;
  EXPECT_EQ(parse(bad, pkt), ParseStatus::bad_tcp_data_offset);
  bad = frame;
  store_be16(bad.data() + 12, 0x0806);
  EXPECT_EQ(parse(bad, pkt), ParseStatus::unsupported_ethertype);
  bad = frame;
  store_be16(bad.data() + 16, 30);  // IP says the TCP header is only 10 bytes long
  EXPECT_EQ(parse(bad, pkt), ParseStatus::truncated_tcp);
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

TEST(Parser, StatusNamesAreDistinct) {
  for (std::size_t i = 0; i < kParseStatusCount; ++i) {
    for (std::size_t j = i + 1; j < kParseStatusCount; ++j) {
      EXPECT_NE(parse_status_name(static_cast<ParseStatus>(i)), parse_status_name(static_cast<ParseStatus>(j)));
    }
  }
}

}  // namespace
}  // namespace flowtrack
