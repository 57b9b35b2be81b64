// Translating the packet quoted in an ICMP error: the quote after rewrite_quoted_endpoint must be
// byte for byte the quote of the original packet translated with the ordinary rewrites, and the outer
// ICMP checksum must stay valid (full recomputation as oracle).
#include <gtest/gtest.h>

#include <random>

#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/packet/rewrite.hpp"
#include "support/checksum_oracle.hpp"

namespace flowtrack {
namespace {

// The IP packet of a built frame (Ethernet stripped).
std::vector<std::uint8_t> ip_packet(const std::vector<std::uint8_t>& frame) { return {frame.begin() + 14, frame.end()}; }

std::vector<std::uint8_t> icmp_error_quoting(const std::vector<std::uint8_t>& quoted_ip, std::size_t quote_bytes) {
  FrameSpec error;
  error.key4 = FlowKeyV4::from_host(0xc6120001, 0x0a000001, 0, 0, ipproto::kIcmp);
  error.icmp_type = 3;  // destination unreachable
  error.icmp_code = 3;
  const std::vector<std::uint8_t> quote(quoted_ip.begin(), quoted_ip.begin() + static_cast<long>(quote_bytes));
  error.icmp_quoted = quote;
  return build_frame(error);
}

TEST(QuotedRewrite, MatchesTranslatingTheOriginalPacket) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    const std::uint8_t protocols[] = {ipproto::kTcp, ipproto::kUdp, ipproto::kIcmp};
    const std::uint8_t protocol = protocols[rng() % 3];
    const auto sport = static_cast<std::uint16_t>(rng());
    const auto dport = protocol == ipproto::kIcmp ? sport : static_cast<std::uint16_t>(rng());
    const FlowKeyV4 key = FlowKeyV4::from_host(rng(), rng(), sport, dport, protocol);
    FrameSpec spec;
    spec.key4 = key;
    spec.payload_bytes = static_cast<std::uint16_t>(rng() % 64);
    spec.tcp_flags = tcpflag::kAck;
    const auto original = build_frame(spec);
    ParsedPacket op;
    ASSERT_EQ(parse_frame(original, LinkType::ethernet, op), ParseStatus::ok);

    const bool source = rng() % 2 == 0;
    const std::uint32_t new_addr = rng();
    const auto new_port = static_cast<std::uint16_t>(rng());
    auto translated = original;
    if (source) rewrite_ipv4_src(translated, op, new_addr);
    else rewrite_ipv4_dst(translated, op, new_addr);
    if (protocol == ipproto::kIcmp) rewrite_icmp_identifier(translated, op, new_port);
    else if (source) rewrite_src_port(translated, op, new_port);
    else rewrite_dst_port(translated, op, new_port);

    // Quote the whole packet, or only the IP header + 8 bytes (RFC 792's minimum).
    const auto full = ip_packet(original);
    const std::size_t quote_bytes = rng() % 2 == 0 ? full.size() : 28;
    auto error = icmp_error_quoting(full, quote_bytes);
    ParsedPacket ep;
    ASSERT_EQ(parse_frame(error, LinkType::ethernet, ep), ParseStatus::ok);
    ASSERT_TRUE(ep.has_embedded) << round;
    rewrite_quoted_endpoint(error, ep, source ? QuotedEndpoint::source : QuotedEndpoint::destination, new_addr, new_port);

    const auto expected = ip_packet(translated);
    const std::vector<std::uint8_t> quoted(error.begin() + ep.embedded_l3_offset,
                                           error.begin() + ep.embedded_l3_offset + static_cast<long>(quote_bytes));
    EXPECT_TRUE(std::equal(quoted.begin(), quoted.end(), expected.begin())) << round << " proto " << int(protocol);
    EXPECT_TRUE(testing::transport_valid(error, ep)) << round;  // the outer ICMP checksum
  }
}

}  // namespace
}  // namespace flowtrack
