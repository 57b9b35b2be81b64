// parse_frame's shortcut for the common case (untagged Ethernet, IPv4 without options or fragmentation,
// a whole TCP or UDP header) must answer exactly as the general walk: same status, same meaning
// (parser.hpp's rule), for the frames it takes and for every near miss it must hand on.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/packet/parser.hpp"
#include "sample_keys.hpp"

namespace flowtrack {
namespace {

// A frame whose parse fills fields the shortcut must overwrite or leave meaningless: an ICMP error
// quoting a TCP packet, behind two VLAN tags.
ParsedPacket stale_parse() {
  const std::vector<std::uint8_t> quoted = build_frame(FrameSpec::tcp4(testing::kTcpKey, tcpflag::kSyn));
  FrameSpec error;
  error.key4 = FlowKeyV4::from_host(0xc6120035, 0x0a000002, 0, 0, ipproto::kIcmp);
  error.icmp_type = 3;
  error.icmp_quoted = std::span<const std::uint8_t>(quoted).subspan(14, 28);  // IP header + 8 bytes
  error.vlan_count = 2;
  error.vlan_ids = {100, 200};
  ParsedPacket stale;
  EXPECT_EQ(parse_frame_general(build_frame(error), LinkType::ethernet, stale), ParseStatus::ok);
  EXPECT_TRUE(stale.has_embedded);
  return stale;
}

void expect_same_answer(const std::vector<std::uint8_t>& edited, const ParsedPacket& stale) {
  // An exact-size copy: a vector cut with resize() keeps its capacity, which hides an over-read from ASan.
  const std::vector<std::uint8_t> frame(edited.begin(), edited.end());
  ParsedPacket general;
  ParsedPacket shortcut = stale;
  const ParseStatus expected = parse_frame_general(frame, LinkType::ethernet, general);
  ASSERT_EQ(parse_frame(frame, LinkType::ethernet, shortcut), expected);
  if (expected == ParseStatus::ok) {
    ASSERT_TRUE(same_meaning(shortcut, general));
  }
}

TEST(ParserShortcut, AnswersAsTheGeneralWalkForEveryByteOfTheHeadersChanged) {
  const ParsedPacket stale = stale_parse();
  std::mt19937 rng(7);
  for (const bool tcp : {true, false}) {
    const std::vector<std::uint8_t> base = build_frame(tcp ? FrameSpec::tcp4(testing::kTcpKey, tcpflag::kAck, 40)
                                                           : FrameSpec::udp4(testing::kUdpKey, 40));
    expect_same_answer(base, stale);
    // Every header byte (Ethernet, IPv4, transport) set to values that matter to some check and to random ones.
    for (std::size_t at = 12; at < 14 + 20 + 20; ++at) {
      for (const std::uint8_t value : {0x00, 0x01, 0x06, 0x08, 0x11, 0x20, 0x3f, 0x40, 0x45, 0x46, 0x50, 0x86, 0xff}) {
        std::vector<std::uint8_t> frame = base;
        frame[at] = value;
        expect_same_answer(frame, stale);
      }
      for (int r = 0; r < 8; ++r) {
        std::vector<std::uint8_t> frame = base;
        frame[at] = static_cast<std::uint8_t>(rng());
        expect_same_answer(frame, stale);
      }
    }
    // Every capture length, and IP total lengths above, at and below what the capture holds.
    for (std::size_t length = 0; length <= base.size() + 4; ++length) {
      std::vector<std::uint8_t> frame = base;
      frame.resize(length, 0);
      expect_same_answer(frame, stale);
      if (frame.size() >= 18) {
        store_be16(frame.data() + 16, static_cast<std::uint16_t>(length - 14 + (length % 3) * 7 - 7));
        expect_same_answer(frame, stale);
      }
    }
  }
}

}  // namespace
}  // namespace flowtrack
