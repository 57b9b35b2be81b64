#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/checksum.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/packet/rewrite.hpp"
#include "support/checksum_oracle.hpp"

namespace flowtrack {
namespace {

using testing::ipv4_header_valid;
using testing::transport_valid;

TEST(Checksum, KnownIpv4HeaderValue) {
  // A classic worked example: the header 4500 0073 0000 4000 4011 xxxx c0a8 0001 c0a8 00c7.
  const std::vector<std::uint8_t> header = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                                            0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_EQ(ipv4_header_checksum(header), 0xb861);
}

TEST(Checksum, OddLengthPadsWithZero) {
  const std::vector<std::uint8_t> odd = {0x01, 0x02, 0x03};
  EXPECT_EQ(checksum_add(odd), 0x0102u + 0x0300u);
}

TEST(Checksum, Rfc1624UpdateMatchesRecomputation) {
  std::mt19937 rng(7);
  for (int round = 0; round < 10000; ++round) {
    std::vector<std::uint8_t> data(2 * (1 + rng() % 32));
    for (auto& b : data) b = static_cast<std::uint8_t>(rng());
    const std::uint16_t before = checksum_finish(checksum_add(data));
    const std::size_t word = 2 * (rng() % (data.size() / 2));
    const std::uint16_t old_word = load_be16(data.data() + word);
    const auto new_word = static_cast<std::uint16_t>(round % 3 == 0 ? 0 : rng());
    store_be16(data.data() + word, new_word);
    const std::uint16_t updated = checksum_update16(before, old_word, new_word);
    const std::uint16_t recomputed = checksum_finish(checksum_add(data));
    // One's complement has two zeros: only all-zero data, whose sum is +0, tells them apart (the update
    // yields 0x0000 where recomputation yields 0xffff). No real header is all zero.
    const bool all_zero = std::all_of(data.begin(), data.end(), [](std::uint8_t b) { return b == 0; });
    if (all_zero) {
      EXPECT_TRUE(updated == 0 || updated == 0xffff);
    } else {
      EXPECT_EQ(updated, recomputed);
    }
  }
}

// ChecksumDelta folds an address's two words as one 32-bit term: the checksum it gives equals the sum of
// the word terms folded at the end (the 16-bit arithmetic of RFC 1624 eqn. 3), to the representation of
// zero, over random and extreme words (0, 0xffff, all ones), so that no rewrite's output byte depends on it.
TEST(Checksum, DeltaOfAWholeAddressEqualsItsTwoWords) {
  std::mt19937 rng(11);
  const auto value = [&](std::uint32_t mask) -> std::uint32_t {
    switch (rng() % 4) {
      case 0: return 0;
      case 1: return mask;
      case 2: return rng() % 2 == 0 ? 0xffffu & mask : 0xffff0000u & mask;
      default: return rng() & mask;
    }
  };
  for (int round = 0; round < 20000; ++round) {
    const std::uint32_t old_addr = value(0xffffffff), new_addr = value(0xffffffff);
    const auto old_port = static_cast<std::uint16_t>(value(0xffff)), new_port = static_cast<std::uint16_t>(value(0xffff));
    const auto checksum = static_cast<std::uint16_t>(value(0xffff));
    ChecksumDelta delta;
    delta.change32(old_addr, new_addr);
    std::uint32_t words = static_cast<std::uint16_t>(~checksum);
    for (const int shift : {16, 0}) {
      words += static_cast<std::uint16_t>(~(old_addr >> shift)) + ((new_addr >> shift) & 0xffff);
    }
    const auto word_by_word = [](std::uint32_t sum) {
      sum = (sum & 0xffff) + (sum >> 16);
      return static_cast<std::uint16_t>(~((sum & 0xffff) + (sum >> 16)));
    };
    ASSERT_EQ(delta.applied_to(checksum), word_by_word(words)) << round;
    delta.change16(old_port, new_port);
    words += static_cast<std::uint16_t>(~old_port) + std::uint32_t{new_port};
    ASSERT_EQ(delta.applied_to(checksum), word_by_word(words)) << round;
  }
}

TEST(Checksum, BuiltFramesAreValid) {
  const auto key = FlowKeyV4::from_host(0x0a000001, 0x0a000002, 1, 2, ipproto::kTcp);
  auto frame = build_frame(FrameSpec::tcp4(key, tcpflag::kSyn, 33));
  ParsedPacket pkt;
  ASSERT_EQ(parse_frame(frame, LinkType::ethernet, pkt), ParseStatus::ok);
  EXPECT_TRUE(ipv4_header_valid(frame, pkt));
  EXPECT_TRUE(transport_valid(frame, pkt));
}

FrameSpec random_spec(std::mt19937& rng) {
  FrameSpec spec;
  spec.vlan_count = static_cast<std::uint8_t>(rng() % 3);
  spec.ip_version = rng() % 2 == 0 ? 4 : 6;
  const std::uint8_t icmp = spec.ip_version == 4 ? ipproto::kIcmp : ipproto::kIcmpV6;
  const std::uint8_t protocols[] = {ipproto::kTcp, ipproto::kUdp, icmp};
  const std::uint8_t protocol = protocols[rng() % 3];
  const auto sport = static_cast<std::uint16_t>(rng());
  // An ICMP query carries its identifier in both key ports.
  const auto dport = protocol == icmp ? sport : static_cast<std::uint16_t>(rng());
  if (spec.ip_version == 4) {
    spec.key4 = FlowKeyV4::from_host(rng(), rng(), sport, dport, protocol);
  } else {
    for (auto& b : spec.key6.src_addr) b = static_cast<std::uint8_t>(rng());
    for (auto& b : spec.key6.dst_addr) b = static_cast<std::uint8_t>(rng());
    spec.key6.src_port = to_network16(sport);
    spec.key6.dst_port = to_network16(dport);
    spec.key6.protocol = protocol;
  }
  spec.icmp_type = spec.ip_version == 4 ? 8 : 128;
  spec.payload_bytes = static_cast<std::uint16_t>(rng() % 200);
  spec.payload_fill = static_cast<std::uint8_t>(rng());
  spec.tcp_seq = rng();
  return spec;
}

// Random packets (IPv4 and IPv6, tagged or not), random rewrites of addresses, ports and ICMP identifiers:
// after each rewrite every checksum equals a full recomputation.
TEST(Rewrite, RandomRewritesKeepEveryChecksumValid) {
  std::mt19937 rng(42);
  for (int round = 0; round < 5000; ++round) {
    const FrameSpec spec = random_spec(rng);
    auto frame = build_frame(spec);
    ParsedPacket pkt;
    ASSERT_EQ(parse_frame(frame, LinkType::ethernet, pkt), ParseStatus::ok);

    const std::uint32_t new_addr = rng();
    const auto new_port = static_cast<std::uint16_t>(rng());
    switch (rng() % 5) {
      case 0: rewrite_ipv4_src(frame, pkt, new_addr); break;
      case 1: rewrite_ipv4_dst(frame, pkt, new_addr); break;
      case 2: rewrite_src_port(frame, pkt, new_port); break;
      case 3: rewrite_dst_port(frame, pkt, new_port); break;
      case 4: rewrite_icmp_identifier(frame, pkt, new_port); break;
    }
    ParsedPacket after;
    ASSERT_EQ(parse_frame(frame, LinkType::ethernet, after), ParseStatus::ok);
    if (after.ip_version == 4) {
      ASSERT_TRUE(ipv4_header_valid(frame, after)) << round;
    }
    ASSERT_TRUE(transport_valid(frame, after)) << round << " v" << int(after.ip_version) << " proto "
                                               << int(after.protocol());
  }
}

// The NAT's one-pass endpoint rewrite writes exactly what the address rewrite followed by the port (or
// identifier) rewrite writes, on every kind of packet random_spec makes, UDP without checksum and
// non-first fragments included; so does the load balancers' address-and-port rewrite.
TEST(Rewrite, EndpointRewriteEqualsAddressThenPortRewrite) {
  std::mt19937 rng(7);
  for (int round = 0; round < 3000; ++round) {
    FrameSpec spec = random_spec(rng);
    spec.ip_version = 4;
    spec.vlan_count = 0;  // the IPv4 header at byte 14, for the edits below
    spec.key4 = FlowKeyV4::from_host(rng(), rng(), static_cast<std::uint16_t>(rng()), static_cast<std::uint16_t>(rng()),
                                     spec.key6.protocol == ipproto::kIcmpV6 ? ipproto::kIcmp : spec.key6.protocol);
    if (spec.key4.protocol == ipproto::kIcmp) spec.key4.dst_port = spec.key4.src_port;
    spec.icmp_type = 8;
    auto one_pass = build_frame(spec);
    if (round % 7 == 1 && spec.key4.protocol == ipproto::kUdp) store_be16(one_pass.data() + 14 + 20 + 6, 0);
    if (round % 7 == 2) {  // a non-first fragment: no transport header
      store_be16(one_pass.data() + 20, 0x0004);
      store_be16(one_pass.data() + 24, 0);
      store_be16(one_pass.data() + 24, ipv4_header_checksum({one_pass.data() + 14, 20}));
    }
    auto two_steps = one_pass;
    auto lb_pass = one_pass;
    ParsedPacket pkt;
    ASSERT_EQ(parse_frame(one_pass, LinkType::ethernet, pkt), ParseStatus::ok);
    const std::uint32_t addr = rng();
    const auto port = static_cast<std::uint16_t>(rng());
    const bool source = rng() % 2 == 0;
    rewrite_ipv4_endpoint(one_pass, pkt, source ? Endpoint::source : Endpoint::destination, addr, port);
    if (source) rewrite_ipv4_src(two_steps, pkt, addr);
    else rewrite_ipv4_dst(two_steps, pkt, addr);
    auto lb_steps = two_steps;  // the address rewritten alone, for the load balancers' rewrite below
    if (pkt.icmp_is_query) rewrite_icmp_identifier(two_steps, pkt, port);
    else if (source) rewrite_src_port(two_steps, pkt, port);
    else rewrite_dst_port(two_steps, pkt, port);
    ASSERT_EQ(one_pass, two_steps) << "round " << round << " protocol " << int(spec.key4.protocol);
    // The load balancers' rewrite: the same, except that an ICMP identifier stays and port 0 keeps the port.
    const std::uint16_t lb_port = round % 5 == 0 ? 0 : port;
    rewrite_ipv4_address_and_port(lb_pass, pkt, source ? Endpoint::source : Endpoint::destination, addr, lb_port);
    if (lb_port != 0 && source) rewrite_src_port(lb_steps, pkt, lb_port);
    if (lb_port != 0 && !source) rewrite_dst_port(lb_steps, pkt, lb_port);
    ASSERT_EQ(lb_pass, lb_steps) << "round " << round << " protocol " << int(spec.key4.protocol);
  }
}

TEST(Rewrite, Icmpv6IdentifierKeepsTheChecksumValid) {
  FrameSpec spec;
  spec.ip_version = 6;
  spec.key6.src_addr[15] = 1;
  spec.key6.dst_addr[15] = 2;
  spec.key6.protocol = ipproto::kIcmpV6;
  spec.key6.src_port = spec.key6.dst_port = to_network16(41);
  spec.icmp_type = 129;  // echo reply
  spec.payload_bytes = 24;
  auto frame = build_frame(spec);
  ParsedPacket pkt;
  ASSERT_EQ(parse_frame(frame, LinkType::ethernet, pkt), ParseStatus::ok);
  rewrite_icmp_identifier(frame, pkt, to_network16(9000));
  ParsedPacket after;
  ASSERT_EQ(parse_frame(frame, LinkType::ethernet, after), ParseStatus::ok);
  EXPECT_EQ(after.key6.src_port, to_network16(9000));
  EXPECT_EQ(after.key6.dst_port, to_network16(9000));
  EXPECT_TRUE(transport_valid(frame, after));
}

TEST(Rewrite, FieldsChangeAsAsked) {
  const auto key = FlowKeyV4::from_host(0x0a000001, 0xc6120001, 1000, 80, ipproto::kTcp);
  auto frame = build_frame(FrameSpec::tcp4(key, tcpflag::kAck, 10));
  ParsedPacket pkt;
  ASSERT_EQ(parse_frame(frame, LinkType::ethernet, pkt), ParseStatus::ok);
  rewrite_ipv4_dst(frame, pkt, to_network32(0x0a010005));
  rewrite_dst_port(frame, pkt, to_network16(8080));
  rewrite_ipv4_src(frame, pkt, to_network32(0x64400001));
  rewrite_src_port(frame, pkt, to_network16(20000));
  ParsedPacket after;
  ASSERT_EQ(parse_frame(frame, LinkType::ethernet, after), ParseStatus::ok);
  EXPECT_EQ(after.key4, FlowKeyV4::from_host(0x64400001, 0x0a010005, 20000, 8080, ipproto::kTcp));
  EXPECT_TRUE(transport_valid(frame, after));
}

TEST(Rewrite, UdpWithoutChecksumStaysWithout) {
  const auto key = FlowKeyV4::from_host(0x0a000001, 0xc6120001, 1000, 53, ipproto::kUdp);
  auto frame = build_frame(FrameSpec::udp4(key, 12));
  ParsedPacket pkt;
  ASSERT_EQ(parse_frame(frame, LinkType::ethernet, pkt), ParseStatus::ok);
  store_be16(frame.data() + pkt.l4_offset + 6, 0);
  rewrite_ipv4_src(frame, pkt, to_network32(0x01020304));
  rewrite_src_port(frame, pkt, to_network16(4444));
  EXPECT_EQ(load_be16(frame.data() + pkt.l4_offset + 6), 0);
  EXPECT_TRUE(ipv4_header_valid(frame, pkt));
}

TEST(Rewrite, NonFirstFragmentTouchesOnlyTheIpHeader) {
  const auto key = FlowKeyV4::from_host(0x0a000001, 0xc6120001, 1000, 53, ipproto::kUdp);
  auto frame = build_frame(FrameSpec::udp4(key, 40));
  store_be16(frame.data() + 20, 0x0004);  // fragment offset 32
  store_be16(frame.data() + 24, 0);
  store_be16(frame.data() + 24, ipv4_header_checksum({frame.data() + 14, 20}));
  ParsedPacket pkt;
  ASSERT_EQ(parse_frame(frame, LinkType::ethernet, pkt), ParseStatus::ok);
  const auto payload_before = std::vector<std::uint8_t>(frame.begin() + 34, frame.end());
  rewrite_ipv4_src(frame, pkt, to_network32(0x01020304));
  rewrite_src_port(frame, pkt, to_network16(1));
  EXPECT_EQ(std::vector<std::uint8_t>(frame.begin() + 34, frame.end()), payload_before);
  EXPECT_TRUE(ipv4_header_valid(frame, pkt));
}

}  // namespace
}  // namespace flowtrack
