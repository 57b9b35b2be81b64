// NAT44 at the packet level: translation both ways with every checksum checked by full recomputation,
// endpoint-independent mapping, paired pooling, port preservation, both filterings, ICMP echo and ICMP
// errors, hairpinning, exhaustion as a counted drop, expiry with port quarantine, per-core port slices.
#include <gtest/gtest.h>

#include "flowtrack/io/synthetic.hpp"
#include "nat_frames.hpp"

namespace flowtrack {
namespace {

using namespace nat_frames;

TEST(Nat44, TcpConnectionIsTranslatedBothWaysAndRepliesRestoreTheOriginalTuple) {
  using namespace tcpflag;
  Nat nat(config(), 0, 1);
  const FlowKeyV4 inside = out_key();
  const Out syn = tcp(nat, inside, kSyn);
  ASSERT_EQ(syn.verdict, Verdict::forward);
  EXPECT_EQ(syn.key.src_addr, to_network32(kPublic));
  EXPECT_EQ(syn.key.src_port, inside.src_port);  // port preserved: it was free in the slice
  EXPECT_EQ(syn.key.dst_addr, inside.dst_addr);
  const Out synack = tcp(nat, syn.key.reversed(), kSyn | kAck);
  EXPECT_EQ(synack.key, inside.reversed());  // exactly the original tuple, reversed
  for (const std::uint8_t flags : {kAck, std::uint8_t(kAck | kPsh), std::uint8_t(kFin | kAck)}) EXPECT_EQ(tcp(nat, inside, flags).key, syn.key);
  EXPECT_EQ(tcp(nat, syn.key.reversed(), kFin | kAck).key, inside.reversed());
  EXPECT_EQ(tcp(nat, inside, kAck).key, syn.key);
  EXPECT_EQ(nat.sessions().size(), 1u);
  EXPECT_EQ(nat.mapping_count(), 1u);
}

TEST(Nat44, EndpointIndependentMappingAndPairedPooling) {
  Nat nat(config(NatFiltering::endpoint_independent, 4), 0, 1);
  const Out a = tcp(nat, out_key(40000, 1, kRemote, 443), tcpflag::kSyn);
  const Out b = tcp(nat, out_key(40000, 1, 0x01010101, 80), tcpflag::kSyn);  // same inside endpoint, other remote
  EXPECT_EQ(a.key.src_addr, b.key.src_addr);
  EXPECT_EQ(a.key.src_port, b.key.src_port);
  EXPECT_EQ(nat.mapping_count(), 1u);
  // Another port of the same inside host: another mapping, the same public address.
  for (std::uint16_t port = 1; port <= 20; ++port) {
    EXPECT_EQ(tcp(nat, out_key(50000 + port, 1), tcpflag::kSyn).key.src_addr, a.key.src_addr);
  }
}

TEST(Nat44, FilteringEndpointIndependentOrAddressDependent) {
  for (const auto filtering : {NatFiltering::endpoint_independent, NatFiltering::address_dependent}) {
    Nat nat(config(filtering), 0, 1);
    const Out syn = tcp(nat, out_key(), tcpflag::kSyn);
    // The same remote address from another port: allowed by both.
    FlowKeyV4 same_address = syn.key.reversed();
    same_address.src_port = to_network16(9999);
    EXPECT_EQ(tcp(nat, same_address, tcpflag::kSyn).verdict, Verdict::forward);
    // Another remote address: only endpoint-independent filtering lets it through.
    FlowKeyV4 stranger = syn.key.reversed();
    stranger.src_addr = to_network32(0x09090909);
    const Out r = tcp(nat, stranger, tcpflag::kSyn);
    if (filtering == NatFiltering::endpoint_independent) {
      EXPECT_EQ(r.verdict, Verdict::forward);
      EXPECT_EQ(r.key.dst_addr, to_network32(kInside + 1));
    } else {
      EXPECT_EQ(r.verdict, Verdict::drop);
      EXPECT_EQ(nat.counters().drops[static_cast<std::size_t>(NfDrop::filtered)], 1u);
    }
  }
}

TEST(Nat44, UnsolicitedInboundToNoMappingIsDroppedAndCounted) {
  Nat nat(config(), 0, 1);
  const FlowKeyV4 unsolicited = FlowKeyV4::from_host(kRemote, kPublic, 443, 2000, ipproto::kTcp);
  EXPECT_EQ(tcp(nat, unsolicited, tcpflag::kSyn).verdict, Verdict::drop);
  EXPECT_EQ(nat.counters().drops[static_cast<std::size_t>(NfDrop::no_mapping)], 1u);
  EXPECT_EQ(nat.sessions().size(), 0u);
}

TEST(Nat44, IcmpEchoIdentifierIsTranslatedBothWays) {
  Nat nat(config(), 0, 1);
  FrameSpec echo;
  echo.key4 = FlowKeyV4::from_host(kInside + 5, kRemote, 777, 777, ipproto::kIcmp);
  echo.icmp_type = 8;
  const Out request = through(nat, echo);
  ASSERT_EQ(request.verdict, Verdict::forward);
  EXPECT_EQ(request.key.src_addr, to_network32(kPublic));
  FrameSpec reply;
  reply.key4 = request.key.reversed();
  reply.icmp_type = 0;
  const Out back = through(nat, reply);
  ASSERT_EQ(back.verdict, Verdict::forward);
  EXPECT_EQ(back.key.dst_addr, to_network32(kInside + 5));
  EXPECT_EQ(back.key.src_port, to_network16(777));
}

TEST(Nat44, InboundIcmpErrorIsTranslatedWithItsQuoteAndTouchesNoTimer) {
  Nat nat(config(), 0, 1);
  const FlowKeyV4 inside = FlowKeyV4::from_host(kInside + 1, kRemote, 40000, 53, ipproto::kUdp);
  const Out sent = through(nat, FrameSpec::udp4(inside, 20), 0);
  const auto conn = nat.sessions().find(inside, flow_hash(inside));
  const Nanos deadline = nat.sessions().deadline(conn.conn);
  // A router answers the translated packet with "port unreachable", quoting it.
  FrameSpec error;
  error.key4 = FlowKeyV4::from_host(0x01020304, kPublic, 0, 0, ipproto::kIcmp);
  error.icmp_type = 3;
  error.icmp_code = 3;
  const std::vector<std::uint8_t> quoted(sent.frame.begin() + 14, sent.frame.end());
  error.icmp_quoted = quoted;
  const Out translated = through(nat, error, 5 * kNanosPerSecond);
  ASSERT_EQ(translated.verdict, Verdict::forward);
  ParsedPacket p;
  ASSERT_EQ(parse_frame(translated.frame, LinkType::ethernet, p), ParseStatus::ok);
  EXPECT_EQ(p.key4.dst_addr, to_network32(kInside + 1));
  ASSERT_TRUE(p.has_embedded);
  EXPECT_EQ(p.embedded_key4, inside);  // the quote is the packet as the inside host sent it
  EXPECT_EQ(nat.sessions().deadline(conn.conn), deadline);
}

TEST(Nat44, HairpinningUsesTheSendersExternalEndpoint) {
  Nat nat(config(), 0, 1);
  // B (10.0.0.2:6000) has a mapping, opened towards the outside.
  const Out b_out = through(nat, FrameSpec::udp4(FlowKeyV4::from_host(kInside + 2, kRemote, 6000, 53, ipproto::kUdp), 8));
  // A sends to B's external endpoint.
  const FlowKeyV4 a_to_b = FlowKeyV4::from_host(kInside + 1, to_host32(b_out.key.src_addr), 5000, to_host16(b_out.key.src_port),
                                                ipproto::kUdp);
  const Out arrives = through(nat, FrameSpec::udp4(a_to_b, 8));
  ASSERT_EQ(arrives.verdict, Verdict::forward);
  EXPECT_EQ(arrives.key.dst_addr, to_network32(kInside + 2));
  EXPECT_EQ(arrives.key.dst_port, to_network16(6000));
  EXPECT_EQ(arrives.key.src_addr, to_network32(kPublic));  // A appears by its external endpoint
  const NatMapping* a = nat.mapping_of(to_network32(kInside + 1), to_network16(5000), ipproto::kUdp);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(arrives.key.src_port, a->external_port);
  // B answers A's external endpoint: back to A, from B's external endpoint.
  const Out answer = through(nat, FrameSpec::udp4(arrives.key.reversed(), 8));
  ASSERT_EQ(answer.verdict, Verdict::forward);
  EXPECT_EQ(answer.key.dst_addr, to_network32(kInside + 1));
  EXPECT_EQ(answer.key.dst_port, to_network16(5000));
  EXPECT_EQ(answer.key.src_addr, b_out.key.src_addr);
  EXPECT_EQ(answer.key.src_port, b_out.key.src_port);
}

TEST(Nat44, ExhaustionDropsNewMappingsAndKeepsTheOldOnes) {
  NatConfig c = config();
  c.port_first = 1024;
  c.port_last = 1027;  // four ports
  Nat nat(c, 0, 1);
  std::vector<Out> first;
  for (std::uint16_t i = 0; i < 4; ++i) first.push_back(tcp(nat, out_key(30000 + i), tcpflag::kSyn));
  for (const Out& o : first) ASSERT_EQ(o.verdict, Verdict::forward);
  EXPECT_EQ(tcp(nat, out_key(31000), tcpflag::kSyn).verdict, Verdict::drop);
  EXPECT_EQ(nat.counters().drops[static_cast<std::size_t>(NfDrop::no_port)], 1u);
  for (std::uint16_t i = 0; i < 4; ++i) EXPECT_EQ(tcp(nat, out_key(30000 + i), tcpflag::kAck).key, first[i].key);
  EXPECT_EQ(nat.mapping_count(), 4u);
}

TEST(Nat44, MappingsExpireAndTheirPortsWaitOutTheQuarantine) {
  NatConfig c = config();
  c.port_first = 1024;
  c.port_last = 1025;
  c.port_quarantine = 120 * kNanosPerSecond;
  Nat nat(c, 0, 1);
  const FlowKeyV4 udp = FlowKeyV4::from_host(kInside + 1, kRemote, 1024, 53, ipproto::kUdp);
  const Out first = through(nat, FrameSpec::udp4(udp, 8), 0);
  EXPECT_EQ(first.key.src_port, to_network16(1024));
  // The UDP mapping lives at least 2 minutes (RFC 4787 REQ-5), then goes with its session.
  nat.expire(119 * kNanosPerSecond);
  EXPECT_EQ(nat.mapping_count(), 1u);
  nat.expire(121 * kNanosPerSecond);
  EXPECT_EQ(nat.mapping_count(), 0u);
  EXPECT_EQ(nat.sessions().size(), 0u);
  // Port 1024 is in quarantine: the same inside endpoint gets the other port.
  EXPECT_EQ(through(nat, FrameSpec::udp4(udp, 8), 122 * kNanosPerSecond).key.src_port, to_network16(1025));
}

TEST(Nat44, CoresGetDisjointSlicesAndRepliesFindTheirOwner) {
  NatConfig c = config();
  Nat core0(c, 0, 2), core1(c, 1, 2);
  EXPECT_LT(core0.port_last(), core1.port_first());
  EXPECT_EQ(core1.port_last(), 65535);
  const Out a = tcp(core0, out_key(100), tcpflag::kSyn);  // port 100 is outside every slice: a random one
  const Out b = tcp(core1, out_key(101), tcpflag::kSyn);
  EXPECT_EQ(nat_owner_of_port(c, 2, to_host16(a.key.src_port)), 0u);
  EXPECT_EQ(nat_owner_of_port(c, 2, to_host16(b.key.src_port)), 1u);
}

}  // namespace
}  // namespace flowtrack

namespace flowtrack {
namespace {

using namespace nat_frames;

// A whole campus trace, captured inside: every outbound packet is translated, every inbound one,
// readdressed to the external endpoint its session had, comes back out byte for byte as captured (the
// translation is exactly reversible); nothing is dropped while there is room; after every timeout no
// session and no mapping is left.
TEST(Nat44, CampusTraceTranslatesReversiblyAndLeavesNothingBehind) {
  CampusProfile profile;
  profile.flows = 3'000;
  const PacketStore trace = generate_campus(profile);
  NatConfig c = config();
  c.inside_network = to_network32(profile.client_network);
  c.inside_prefix_length = profile.client_prefix_length;
  c.max_sessions = c.max_mappings = 2 * profile.flows;
  Nat nat(c, 0, 1);
  std::size_t inbound = 0;
  Nanos now = 0;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    now = trace[i].timestamp_ns;
    std::vector<std::uint8_t> frame(trace[i].bytes.begin(), trace[i].bytes.end());
    NfPacket packet{frame, {}, trace[i].wire_length};
    ASSERT_EQ(parse_frame(frame, trace.link_type(), packet.parsed), ParseStatus::ok);
    const bool from_outside = !nat.is_inside(packet.parsed.key4.src_addr);
    if (from_outside) {
      std::uint32_t addr;
      std::uint16_t port;
      ASSERT_TRUE(nat.external_endpoint_of(packet.parsed.key4, addr, port)) << i;
      rewrite_ipv4_dst(frame, packet.parsed, addr);
      if (packet.parsed.icmp_is_query) rewrite_icmp_identifier(frame, packet.parsed, port);
      else rewrite_dst_port(frame, packet.parsed, port);
      ASSERT_EQ(parse_frame(frame, trace.link_type(), packet.parsed), ParseStatus::ok);
    }
    ASSERT_EQ(process_packet(nat, packet, now), Verdict::forward) << i;
    if (from_outside) {
      ++inbound;
      ASSERT_TRUE(std::equal(frame.begin(), frame.end(), trace[i].bytes.begin())) << "inbound packet " << i;
    } else {
      ParsedPacket after;
      ASSERT_EQ(parse_frame(frame, trace.link_type(), after), ParseStatus::ok);
      EXPECT_TRUE(nat.is_public(after.key4.src_addr)) << i;
    }
    nat.expire(now);
  }
  EXPECT_GT(inbound, trace.size() / 4);
  EXPECT_EQ(nat.counters().connections_created, profile.flows);
  nat.expire(now + 432'001 * kNanosPerSecond, ~std::size_t{0});
  EXPECT_EQ(nat.sessions().size(), 0u);
  EXPECT_EQ(nat.mapping_count(), 0u);
}

}  // namespace
}  // namespace flowtrack
