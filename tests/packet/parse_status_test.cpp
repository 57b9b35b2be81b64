// Every ParseStatus, each from a frame built to produce exactly it, and the precise status for a frame
// cut at every length (the cut frames are exact-size heap buffers, so ASan sees any read past them).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "sample_keys.hpp"
#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/packet/parser.hpp"
#include "frame_edits.hpp"

namespace flowtrack {
namespace {

using testing::kTcpKey;
using testing::kUdpKey;

const FlowKeyV4 kEchoKey = FlowKeyV4::from_host(0x0a000003, 0x08080808, 77, 77, ipproto::kIcmp);
constexpr std::size_t kEth = 14;  // untagged Ethernet header

FrameSpec tcp6_spec() {
  FrameSpec spec;
  spec.ip_version = 6;
  spec.key6.src_addr[15] = 1;
  spec.key6.dst_addr[15] = 2;
  spec.key6.protocol = ipproto::kTcp;
  spec.key6.src_port = to_network16(1234);
  spec.key6.dst_port = to_network16(443);
  return spec;
}

FrameSpec echo_spec() {
  FrameSpec spec;
  spec.key4 = kEchoKey;
  return spec;
}

std::vector<std::uint8_t> prefix(const std::vector<std::uint8_t>& frame, std::size_t length) {
  return {frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(length)};
}

struct StatusCase {
  std::string name;
  std::vector<std::uint8_t> frame;
  LinkType link;
  ParseStatus expected;
};

std::vector<StatusCase> status_cases() {
  const auto tcp4 = build_frame(FrameSpec::tcp4(kTcpKey, tcpflag::kAck, 8));
  const auto udp4 = build_frame(FrameSpec::udp4(kUdpKey, 8));
  const auto echo = build_frame(echo_spec());
  const auto tcp6 = build_frame(tcp6_spec());
  FrameSpec raw_spec = FrameSpec::tcp4(kTcpKey, tcpflag::kAck);
  raw_spec.ethernet = false;
  const auto raw = build_frame(raw_spec);

  std::vector<StatusCase> cases;
  auto add = [&cases](std::string name, std::vector<std::uint8_t> frame, ParseStatus expected,
                      LinkType link = LinkType::ethernet) {
    cases.push_back({std::move(name), std::move(frame), link, expected});
  };

  add("whole tcp4", tcp4, ParseStatus::ok);
  add("ethernet header cut", prefix(tcp4, 13), ParseStatus::truncated_link);
  add("raw ip empty", {}, ParseStatus::truncated_link, LinkType::raw_ip);
  add("sll header cut", std::vector<std::uint8_t>(15, 0), ParseStatus::truncated_link, LinkType::linux_sll);
  add("sll2 header cut", std::vector<std::uint8_t>(19, 0), ParseStatus::truncated_link, LinkType::linux_sll2);
  add("bsd null header cut", std::vector<std::uint8_t>(3, 2), ParseStatus::truncated_link, LinkType::bsd_null);
  add("bsd loop header cut", std::vector<std::uint8_t>(3, 0), ParseStatus::truncated_link, LinkType::bsd_loop);
  add("ppp address and control only", {0xff, 0x03}, ParseStatus::truncated_link, LinkType::ppp);
  add("ppp protocol cut", {0xff, 0x03, 0x00}, ParseStatus::truncated_link, LinkType::ppp);
  add("cisco hdlc header cut", {0x0f, 0x00, 0x08}, ParseStatus::truncated_link, LinkType::cisco_hdlc);
  add("bsd null carrying appletalk", {16, 0, 0, 0, 0x45}, ParseStatus::unsupported_link_protocol, LinkType::bsd_null);
  add("bsd loop in host order", {2, 0, 0, 0, 0x45}, ParseStatus::unsupported_link_protocol, LinkType::bsd_loop);
  add("ppp carrying lcp", {0xff, 0x03, 0xc0, 0x21, 0x01}, ParseStatus::unsupported_link_protocol, LinkType::ppp);

  auto vlan = prefix(tcp4, 12);
  vlan.insert(vlan.end(), {0x81, 0x00, 0x00});  // a tag announced, but only one byte of it present
  add("vlan tag cut", vlan, ParseStatus::truncated_vlan);

  auto three_tags = tcp4;
  three_tags.insert(three_tags.begin() + 12, {0x88, 0xa8, 0x00, 0x01, 0x81, 0x00, 0x00, 0x02, 0x81, 0x00, 0x00, 0x03});
  add("three vlan tags", three_tags, ParseStatus::too_many_vlan_tags);

  auto arp = tcp4;
  store_be16(arp.data() + 12, 0x0806);
  add("arp ethertype", arp, ParseStatus::unsupported_ethertype);

  std::vector<std::uint8_t> sll2_arp(20, 0);
  store_be16(sll2_arp.data(), 0x0806);
  add("sll2 carrying arp", sll2_arp, ParseStatus::unsupported_link_protocol, LinkType::linux_sll2);

  add("ipv4 header cut", prefix(tcp4, kEth + 19), ParseStatus::truncated_ipv4);
  auto options_cut = prefix(tcp4, kEth + 20);
  options_cut[kEth] = 0x46;  // IHL says 24 bytes, 20 are present
  add("ipv4 options cut", options_cut, ParseStatus::truncated_ipv4);

  auto version = tcp4;
  version[kEth] = 0x65;
  add("ipv4 with version 6", version, ParseStatus::bad_ipv4_version);
  auto ihl = tcp4;
  ihl[kEth] = 0x44;
  add("ipv4 ihl 4", ihl, ParseStatus::bad_ipv4_header_length);
  auto total = tcp4;
  store_be16(total.data() + kEth + 2, 19);
  add("ipv4 total length below header", total, ParseStatus::bad_ipv4_total_length);

  add("ipv6 header cut", prefix(tcp6, kEth + 39), ParseStatus::truncated_ipv6);
  auto version6 = tcp6;
  version6[kEth] = 0x45;
  add("ipv6 with version 4", version6, ParseStatus::bad_ipv6_version);

  auto hop = tcp6;
  test::insert_ipv6_extension(hop, kEth, test::ipv6ext::kHopByHop, std::vector<std::uint8_t>(14, 0));
  add("ipv6 extension cut", prefix(hop, kEth + 40 + 12), ParseStatus::truncated_ipv6_extension);
  auto overlong = hop;
  store_be16(overlong.data() + kEth + 4, 16);  // payload length covers only the extension, not TCP
  add("ipv6 payload length ends after the chain", overlong, ParseStatus::truncated_tcp);
  store_be16(overlong.data() + kEth + 4, 8);  // ... ends inside the extension header
  add("ipv6 payload length ends in an extension", overlong, ParseStatus::truncated_ipv6_extension);

  auto long_chain = tcp6;
  for (int i = 0; i < 9; ++i) {
    test::insert_ipv6_extension(long_chain, kEth, test::ipv6ext::kDestinationOptions, std::vector<std::uint8_t>(6, 0));
  }
  add("nine extension headers", long_chain, ParseStatus::too_many_ipv6_extensions);

  auto nibble = raw;
  nibble[0] = 0x55;
  add("raw ip version 5", nibble, ParseStatus::bad_ip_version, LinkType::raw_ip);

  add("tcp header cut", prefix(tcp4, kEth + 20 + 19), ParseStatus::truncated_tcp);
  auto tcp_options_cut = prefix(tcp4, kEth + 20 + 20);
  tcp_options_cut[kEth + 20 + 12] = 0x60;  // data offset 24 bytes, 20 present
  add("tcp options cut", tcp_options_cut, ParseStatus::truncated_tcp);
  auto short_ip = tcp4;
  store_be16(short_ip.data() + kEth + 2, 30);  // the IP packet ends 10 bytes into the TCP header
  add("ip total length ends in tcp", short_ip, ParseStatus::truncated_tcp);
  auto data_offset = tcp4;
  data_offset[kEth + 20 + 12] = 0x40;
  add("tcp data offset 4", data_offset, ParseStatus::bad_tcp_data_offset);

  add("udp header cut", prefix(udp4, kEth + 20 + 7), ParseStatus::truncated_udp);
  add("icmp header cut", prefix(echo, kEth + 20 + 7), ParseStatus::truncated_icmp);
  return cases;
}

TEST(ParseStatus, EveryStatusHasAFrameThatProducesIt) {
  std::set<ParseStatus> seen;
  for (const auto& c : status_cases()) {
    ParsedPacket packet;
    EXPECT_EQ(parse_frame(c.frame, c.link, packet), c.expected)
        << c.name << ": expected " << parse_status_name(c.expected);
    seen.insert(c.expected);
  }
  for (std::size_t i = 0; i < kParseStatusCount; ++i) {
    const auto status = static_cast<ParseStatus>(i);
    EXPECT_TRUE(seen.contains(status)) << "no case for " << parse_status_name(status);
  }
}

TEST(ParseStatus, NamesAreDistinctAndUnknownValuesAreNamed) {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kParseStatusCount; ++i) {
    names.insert(parse_status_name(static_cast<ParseStatus>(i)));
  }
  EXPECT_EQ(names.size(), kParseStatusCount);
  EXPECT_EQ(parse_status_name(ParseStatus::count_), "unknown");
}

// A frame as a sequence of headers: a capture cut anywhere inside one reports that header truncated.
struct Layer {
  std::size_t end;  // one past the header's last byte
  ParseStatus when_cut;
};

void expect_cuts(const std::vector<std::uint8_t>& frame, const std::vector<Layer>& layers, const char* what) {
  ParsedPacket whole;
  ASSERT_EQ(parse_frame(frame, LinkType::ethernet, whole), ParseStatus::ok) << what;
  ASSERT_EQ(whole.payload_offset, layers.back().end) << what;
  std::size_t layer = 0;
  for (std::size_t length = 0; length <= frame.size(); ++length) {
    while (layer < layers.size() && length >= layers[layer].end) ++layer;
    const ParseStatus expected = layer < layers.size() ? layers[layer].when_cut : ParseStatus::ok;
    ParsedPacket packet;
    EXPECT_EQ(parse_frame(prefix(frame, length), LinkType::ethernet, packet), expected)
        << what << " cut to " << length << " bytes";
    // Past the headers a cut is a short snaplen: the packet parses and says it was cut.
    if (expected == ParseStatus::ok) {
      EXPECT_EQ(packet.captured_truncated, length < frame.size()) << what << " cut to " << length;
    }
  }
}

TEST(ParseStatus, CutAtEveryLengthReportsTheCutHeader) {
  FrameSpec tagged = FrameSpec::tcp4(kTcpKey, tcpflag::kSyn, 6);
  tagged.vlan_count = 2;
  expect_cuts(build_frame(tagged), {{14, ParseStatus::truncated_link},
                                    {18, ParseStatus::truncated_vlan},
                                    {22, ParseStatus::truncated_vlan},
                                    {42, ParseStatus::truncated_ipv4},
                                    {62, ParseStatus::truncated_tcp}},
              "qinq tcp4");

  auto options = build_frame(FrameSpec::udp4(kUdpKey, 5));
  test::add_ipv4_options(options, kEth, 2);
  expect_cuts(options, {{14, ParseStatus::truncated_link}, {42, ParseStatus::truncated_ipv4},
                        {50, ParseStatus::truncated_udp}},
              "udp4 with options");

  expect_cuts(build_frame(echo_spec()), {{14, ParseStatus::truncated_link}, {34, ParseStatus::truncated_ipv4},
                                         {42, ParseStatus::truncated_icmp}},
              "icmp echo");

  auto chain = build_frame(tcp6_spec());
  test::insert_ipv6_extension(chain, kEth, test::ipv6ext::kRouting, std::vector<std::uint8_t>(14, 0));
  test::insert_ipv6_extension(chain, kEth, test::ipv6ext::kHopByHop, std::vector<std::uint8_t>(6, 0));
  expect_cuts(chain, {{14, ParseStatus::truncated_link},
                      {54, ParseStatus::truncated_ipv6},
                      {62, ParseStatus::truncated_ipv6_extension},
                      {78, ParseStatus::truncated_ipv6_extension},
                      {98, ParseStatus::truncated_tcp}},
              "tcp6 with hop-by-hop and routing");
}

}  // namespace
}  // namespace flowtrack
