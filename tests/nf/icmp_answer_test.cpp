// answer_with_icmp_error: the answer built in place over the refused packet, on every link layer the
// parser reads (Ethernet with and without VLAN tags: MACs swapped; raw IP: nothing to swap), and the
// packets it must not answer.
#include <gtest/gtest.h>

#include "flowtrack/nf/icmp_answer.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "support/checksum_oracle.hpp"

namespace flowtrack {
namespace {

constexpr std::uint32_t kHost = 0x0a000001, kNat = 0xcb007101;

struct Answered {
  bool answered;
  std::vector<std::uint8_t> frame;
  ParsedPacket parsed;
};

Answered answer(const FrameSpec& spec, LinkType link, std::size_t room = 200) {
  std::vector<std::uint8_t> frame = build_frame(spec);
  const std::size_t size = frame.size();
  frame.resize(size + room);
  NfPacket packet{std::span(frame).first(size), {}, static_cast<std::uint32_t>(size), frame.size()};
  EXPECT_EQ(parse_frame(packet.frame, link, packet.parsed), ParseStatus::ok);
  const bool answered = answer_with_icmp_error(packet, icmp4::kDestinationUnreachable, icmp4::kAdministrativelyProhibited,
                                               to_network32(kNat));
  EXPECT_EQ(packet.wire_length, packet.frame.size());
  frame.resize(packet.frame.size());
  ParsedPacket parsed;
  EXPECT_EQ(parse_frame(frame, link, parsed), ParseStatus::ok);
  return {answered, frame, parsed};
}

void expect_answer(const Answered& a, const FlowKeyV4& refused) {
  ASSERT_TRUE(a.answered);
  EXPECT_TRUE(testing::ipv4_header_valid(a.frame, a.parsed));
  EXPECT_TRUE(testing::transport_valid(a.frame, a.parsed));
  EXPECT_EQ(a.parsed.key4.src_addr, to_network32(kNat));
  EXPECT_EQ(a.parsed.key4.dst_addr, refused.src_addr);
  EXPECT_EQ(a.parsed.icmp_type, 3);
  EXPECT_EQ(a.parsed.icmp_code, 13);
  ASSERT_TRUE(a.parsed.has_embedded);
  EXPECT_EQ(a.parsed.embedded_key4, refused);
  EXPECT_EQ(a.parsed.l3_end - a.parsed.l3_offset, 20 + 8 + 20 + 8);
}

const FlowKeyV4 kRefused = FlowKeyV4::from_host(kHost, 0x08080808, 40000, 443, ipproto::kTcp);

TEST(IcmpAnswer, EthernetWithVlanTagsKeepsThemAndSwapsTheMacs) {
  for (const std::uint8_t tags : {0, 1, 2}) {
    FrameSpec spec = FrameSpec::tcp4(kRefused, tcpflag::kSyn, 300);
    spec.vlan_count = tags;
    spec.vlan_ids = {100, 200};
    const Answered a = answer(spec, LinkType::ethernet);
    expect_answer(a, kRefused);
    EXPECT_EQ(a.parsed.vlan_count, tags);
    EXPECT_TRUE(std::equal(spec.src_mac.begin(), spec.src_mac.end(), a.frame.begin()));
    EXPECT_TRUE(std::equal(spec.dst_mac.begin(), spec.dst_mac.end(), a.frame.begin() + 6));
  }
}

TEST(IcmpAnswer, RawIpHasNoLinkHeaderToTouch) {
  FrameSpec spec = FrameSpec::udp4(FlowKeyV4::from_host(kHost, 0x08080808, 5000, 53, ipproto::kUdp), 2);
  spec.ethernet = false;
  const Answered a = answer(spec, LinkType::raw_ip);
  expect_answer(a, spec.key4);
  EXPECT_EQ(a.parsed.l3_offset, 0);
}

TEST(IcmpAnswer, NeverAnswersAnErrorOrALaterFragmentAndNeedsRoom) {
  // An ICMP error.
  const std::vector<std::uint8_t> quoted = build_frame(FrameSpec::udp4(FlowKeyV4::from_host(0x08080808, kHost, 53, 5000, ipproto::kUdp)));
  FrameSpec error;
  error.key4 = FlowKeyV4::from_host(kHost, 0x08080808, 0, 0, ipproto::kIcmp);
  error.icmp_type = 3;
  error.icmp_code = 3;
  error.icmp_quoted = std::span(quoted).subspan(14);
  EXPECT_FALSE(answer(error, LinkType::ethernet).answered);
  // A later fragment (offset 8).
  std::vector<std::uint8_t> later = build_frame(FrameSpec::udp4(FlowKeyV4::from_host(kHost, 0x08080808, 5000, 53, ipproto::kUdp), 40));
  store_be16(later.data() + 14 + 6, 1);
  store_be16(later.data() + 14 + 10, ipv4_header_checksum({later.data() + 14, 20}));
  const std::size_t size = later.size();
  later.resize(size + 200);  // room enough: refused for being a later fragment
  NfPacket packet{std::span(later).first(size), {}, static_cast<std::uint32_t>(size), later.size()};
  ASSERT_EQ(parse_frame(packet.frame, LinkType::ethernet, packet.parsed), ParseStatus::ok);
  ASSERT_TRUE(packet.parsed.is_fragment);
  EXPECT_FALSE(answer_with_icmp_error(packet, 3, 13, to_network32(kNat)));
  EXPECT_EQ(packet.frame.size(), size);
  // No room: the packet is left as it was.
  const FrameSpec small = FrameSpec::tcp4(kRefused, tcpflag::kSyn);
  const Answered cramped = answer(small, LinkType::ethernet, 0);
  EXPECT_FALSE(cramped.answered);
  EXPECT_EQ(cramped.frame, build_frame(small));
}

}  // namespace
}  // namespace flowtrack
