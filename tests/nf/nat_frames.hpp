// What the NAT tests share: a small NAT configuration (inside 10.0.0.0/8, public 203.0.113.1...),
// and one packet through the NAT built in code, with every checksum of what comes out checked by full
// recomputation (tests/support/checksum_oracle.hpp).
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "support/checksum_oracle.hpp"

namespace flowtrack::nat_frames {

using Nat = Nat44<CuckooTable<FlowKeyV4>>;
inline constexpr std::uint32_t kInside = 0x0a000000;  // 10.0.0.0/8
inline constexpr std::uint32_t kPublic = 0xcb007101;  // 203.0.113.1
inline constexpr std::uint32_t kRemote = 0x08080808;
// Room past a frame for a function that answers with a longer packet (NfPacket::capacity).
inline constexpr std::size_t kRoom = 600;

inline NatConfig config(NatFiltering filtering = NatFiltering::endpoint_independent, std::size_t pool = 1) {
  NatConfig c;
  c.inside_network = to_network32(kInside);
  c.inside_prefix_length = 8;
  for (std::size_t i = 0; i < pool; ++i) c.pool.push_back(to_network32(kPublic + static_cast<std::uint32_t>(i)));
  c.filtering = filtering;
  c.max_sessions = 1024;
  c.max_mappings = 1024;
  return c;
}

struct Out {
  Verdict verdict;
  FlowKeyV4 key;                    // the key of what left the NAT (or of the untouched input)
  std::vector<std::uint8_t> frame;  // what left the NAT: the input rewritten, or the NAT's reply
  std::uint32_t wire_length = 0;
  std::vector<std::vector<std::uint8_t>> released;  // held fragments this packet let go, in order
};

// Checks what a NAT let out: it parses and every checksum is right (a fragment's transport checksum
// covers the whole datagram, so only the IP header is checked for fragments).
inline ParsedPacket parse_checked(std::span<const std::uint8_t> frame) {
  ParsedPacket after;
  EXPECT_EQ(parse_frame(frame, LinkType::ethernet, after), ParseStatus::ok);
  EXPECT_TRUE(testing::ipv4_header_valid(frame, after));
  if (!after.is_fragment) {
    EXPECT_TRUE(testing::transport_valid(frame, after));
  }
  return after;
}

// One frame through the NAT (a Nat, or a Nat44 of another event sink) at `now`, with `room` bytes
// writable past it, as if it came through a port of role `arrival` (unknown: replayed).
template <class AnyNat>
Out through_frame(AnyNat& nat, std::vector<std::uint8_t> frame, Nanos now = 0, std::size_t room = kRoom,
                         PortRole arrival = PortRole::unknown) {
  const std::size_t size = frame.size();
  frame.resize(size + room);
  NfPacket packet{std::span(frame).first(size), {}, static_cast<std::uint32_t>(size), frame.size()};
  packet.arrival = arrival;
  EXPECT_EQ(parse_frame(packet.frame, LinkType::ethernet, packet.parsed), ParseStatus::ok);
  std::vector<std::vector<std::uint8_t>> released;
  const Verdict verdict = process_packet(nat, packet, now, [&](std::span<const std::uint8_t> held, std::uint32_t wire_length) {
    EXPECT_EQ(wire_length, held.size());
    parse_checked(held);
    released.emplace_back(held.begin(), held.end());
  });
  frame.resize(packet.frame.size());  // a reply is built in place, from frame.data()
  const ParsedPacket after = parse_checked(frame);
  return {verdict, after.key4, frame, packet.wire_length, std::move(released)};
}

template <class AnyNat>
Out through(AnyNat& nat, const FrameSpec& spec, Nanos now = 0, std::size_t room = kRoom, PortRole arrival = PortRole::unknown) {
  return through_frame(nat, build_frame(spec), now, room, arrival);
}

template <class AnyNat>
Out tcp(AnyNat& nat, const FlowKeyV4& key, std::uint8_t flags, Nanos now = 0) {
  return through(nat, FrameSpec::tcp4(key, flags, 10), now);
}

inline FlowKeyV4 out_key(std::uint16_t sport = 40000, std::uint32_t host = 1, std::uint32_t remote = kRemote,
                         std::uint16_t dport = 443) {
  return FlowKeyV4::from_host(kInside + host, remote, sport, dport, ipproto::kTcp);
}

inline std::uint64_t drops(const Nat& nat, NfDrop reason) { return nat.counters().drops[static_cast<std::size_t>(reason)]; }

}  // namespace flowtrack::nat_frames
