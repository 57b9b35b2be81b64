// NAT44 against the behaviours RFC 4787 (UDP), 5382 (TCP), 5508 (ICMP), 6888 (carrier-grade) and 7857
// (updates) pin down, one packet-level test per requirement, named after it. Time is the injected
// clock: an idle timeout of hours is one expire() call. Every frame out of the NAT has its checksums
// checked by full recomputation (nat_frames.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "nat_frames.hpp"

namespace flowtrack {
namespace {

using namespace nat_frames;
using namespace tcpflag;

constexpr Nanos kSecond = kNanosPerSecond;
// The timer wheel of the session tracker expires a session less than one tick (100 ms) after its
// deadline, never before it: "just after" a timeout is one tick past it.
constexpr Nanos kJustAfter = 100 * kNanosPerMilli + 1;
constexpr Nanos kJustBefore = kNanosPerMilli;

bool has_session(const Nat& nat, const FlowKeyV4& inside) {
  return static_cast<bool>(nat.sessions().find(inside, flow_hash(inside)));
}

bool has_mapping(const Nat& nat, const FlowKeyV4& inside) {
  return nat.mapping_of(inside.src_addr, inside.src_port, inside.protocol) != nullptr;
}

// The session of `inside` (and its mapping, its only session) lives until `last_packet + timeout` and
// is gone one tick after: the boundary of every lifetime requirement.
void expect_lifetime(Nat& nat, const FlowKeyV4& inside, Nanos last_packet, Nanos timeout) {
  nat.expire(last_packet + timeout - kJustBefore);
  EXPECT_TRUE(has_session(nat, inside)) << "gone before its timeout";
  EXPECT_TRUE(has_mapping(nat, inside));
  nat.expire(last_packet + timeout + kJustAfter);
  EXPECT_FALSE(has_session(nat, inside)) << "alive after its timeout";
  EXPECT_FALSE(has_mapping(nat, inside));
}

// One TCP connection through the NAT, opened from inside: every packet each way must come out as the
// other side expects it (the external endpoint outside, the inside endpoint inside).
struct Connection {
  Nat& nat;
  FlowKeyV4 inside;   // as the inside host sends
  FlowKeyV4 outside;  // as the remote sends back (to the external endpoint)

  Connection(Nat& n, const FlowKeyV4& key, Nanos now = 0) : nat(n), inside(key) {
    const Out syn = tcp(nat, inside, kSyn, now);
    EXPECT_EQ(syn.verdict, Verdict::forward);
    outside = syn.key.reversed();
  }
  void out(std::uint8_t flags, Nanos now = 0) const {
    const Out o = tcp(nat, inside, flags, now);
    EXPECT_EQ(o.verdict, Verdict::forward);
    EXPECT_EQ(o.key, outside.reversed());
  }
  void in(std::uint8_t flags, Nanos now = 0) const {
    const Out o = tcp(nat, outside, flags, now);
    EXPECT_EQ(o.verdict, Verdict::forward);
    EXPECT_EQ(o.key, inside.reversed());
  }
  void handshake(Nanos now = 0) const {
    in(kSyn | kAck, now);
    out(kAck, now);
  }
  TcpState state() const {
    const ConnMatch m = nat.sessions().find(inside, flow_hash(inside));
    return m ? nat.sessions().connection(m.conn).tcp.state : TcpState::none;
  }
};

FlowKeyV4 udp_key(std::uint16_t sport = 40000, std::uint32_t host = 1, std::uint32_t remote = kRemote, std::uint16_t dport = 53) {
  return FlowKeyV4::from_host(kInside + host, remote, sport, dport, ipproto::kUdp);
}

FrameSpec echo(const FlowKeyV4& key, std::uint8_t type) {
  FrameSpec spec;
  spec.key4 = key;
  spec.icmp_type = type;
  return spec;
}

FlowKeyV4 icmp_key(std::uint32_t src, std::uint32_t dst, std::uint16_t identifier) {
  return FlowKeyV4::from_host(src, dst, identifier, identifier, ipproto::kIcmp);
}

// An ICMP error (type 3, `code`) from `src` to `dst` quoting `quoted` (a frame, from its IP header on).
FrameSpec icmp_error(std::uint32_t src, std::uint32_t dst, const std::vector<std::uint8_t>& quoted_frame, std::uint8_t code = 3) {
  FrameSpec error;
  error.key4 = FlowKeyV4::from_host(src, dst, 0, 0, ipproto::kIcmp);
  error.icmp_type = 3;
  error.icmp_code = code;
  error.icmp_quoted = std::span(quoted_frame).subspan(14);
  return error;
}

ParsedPacket parsed(const Out& o) {
  ParsedPacket p;
  EXPECT_EQ(parse_frame(o.frame, LinkType::ethernet, p), ParseStatus::ok);
  return p;
}

// ---------------------------------------------------------------------------------------------------
// RFC 4787 (UDP)

TEST(NatRfc4787, Req1EndpointIndependentMapping) {
  Nat nat(config(), 0, 1);
  const Out first = through(nat, FrameSpec::udp4(udp_key(40000, 1, kRemote, 53), 8));
  // The same inside endpoint towards another port of the same remote, and towards other remotes.
  for (const auto& [remote, port] : {std::pair{kRemote, 5353}, std::pair{0x01010101u, 53}, std::pair{0x09090909u, 9999}}) {
    const Out o = through(nat, FrameSpec::udp4(udp_key(40000, 1, remote, static_cast<std::uint16_t>(port)), 8));
    EXPECT_EQ(o.key.src_addr, first.key.src_addr);
    EXPECT_EQ(o.key.src_port, first.key.src_port);
  }
  EXPECT_EQ(nat.mapping_count(), 1u);
  EXPECT_EQ(nat.sessions().size(), 4u);
}

TEST(NatRfc4787, Req2PairedAddressPooling) {
  NatConfig c = config(NatFiltering::endpoint_independent, 4);
  c.max_sessions = c.max_mappings = 4096;
  Nat nat(c, 0, 1);
  std::set<std::uint32_t> used;
  for (std::uint32_t host = 1; host <= 64; ++host) {
    const std::uint32_t address = through(nat, FrameSpec::udp4(udp_key(1000, host), 8)).key.src_addr;
    used.insert(address);
    for (std::uint16_t port = 2000; port < 2010; ++port) {  // UDP and TCP, many ports, many remotes
      EXPECT_EQ(through(nat, FrameSpec::udp4(udp_key(port, host, kRemote + port), 8)).key.src_addr, address);
      EXPECT_EQ(tcp(nat, out_key(port, host, kRemote + port), kSyn).key.src_addr, address);
    }
  }
  EXPECT_GT(used.size(), 1u);  // the subscribers are spread over the pool
}

// Inside endpoints sending from one port to one remote endpoint: each gets an external endpoint of
// its own (no port overloading), and each reply reaches its own host.
void expect_no_port_overloading(std::uint8_t protocol) {
  Nat nat(config(), 0, 1);
  std::set<std::pair<std::uint32_t, std::uint16_t>> external;
  for (std::uint32_t host = 1; host <= 200; ++host) {
    const FlowKeyV4 key = FlowKeyV4::from_host(kInside + host, kRemote, 5000, 443, protocol);
    const Out o = through(nat, protocol == ipproto::kTcp ? FrameSpec::tcp4(key, kSyn) : FrameSpec::udp4(key, 8));
    ASSERT_EQ(o.verdict, Verdict::forward);
    EXPECT_TRUE(external.insert({o.key.src_addr, o.key.src_port}).second) << host;
    const FlowKeyV4 reply = o.key.reversed();
    const Out back = through(nat, protocol == ipproto::kTcp ? FrameSpec::tcp4(reply, kSyn | kAck) : FrameSpec::udp4(reply, 8));
    EXPECT_EQ(back.key, key.reversed());
  }
}

TEST(NatRfc4787, Req3NoPortOverloading) { expect_no_port_overloading(ipproto::kUdp); }

TEST(NatRfc4787, Req3PortPreservedWhenFreeElseRandom) {
  NatConfig c = config();
  Nat nat(c, 0, 1);
  // Free in the slice: kept. Taken, or outside the slice (below 1024): a random free port (RFC 6056),
  // not the next one up.
  EXPECT_EQ(through(nat, FrameSpec::udp4(udp_key(40000, 1), 8)).key.src_port, to_network16(40000));
  std::vector<std::uint16_t> picked;
  for (std::uint32_t host = 2; host <= 33; ++host) {
    const std::uint16_t port = to_host16(through(nat, FrameSpec::udp4(udp_key(40000, host), 8)).key.src_port);
    EXPECT_NE(port, 40000);
    EXPECT_GE(port, c.port_first);
    picked.push_back(port);
  }
  std::size_t sequential = 0;
  for (std::size_t i = 1; i < picked.size(); ++i) sequential += picked[i] == picked[i - 1] + 1;
  EXPECT_LT(sequential, 3u);
  const std::uint16_t low = to_host16(through(nat, FrameSpec::udp4(udp_key(80, 40), 8)).key.src_port);
  EXPECT_GE(low, c.port_first);
  // A port of another core's slice is not this core's to keep: a random one of its own slice instead.
  Nat core0(c, 0, 2);
  const std::uint16_t foreign = to_host16(through(core0, FrameSpec::udp4(udp_key(60000), 8)).key.src_port);
  EXPECT_GE(foreign, core0.port_first());
  EXPECT_LE(foreign, core0.port_last());
}

TEST(NatRfc4787, Req5UdpMappingLivesAtLeastTwoMinutes) {
  Nat nat(config(), 0, 1);
  EXPECT_GE(nat_timeouts().udp_unreplied, 120 * kSecond);
  const FlowKeyV4 key = udp_key();
  through(nat, FrameSpec::udp4(key, 8), 0);
  expect_lifetime(nat, key, 0, nat_timeouts().udp_unreplied);
}

TEST(NatRfc4787, Req6OutboundPacketsRefreshTheMapping) {
  Nat nat(config(), 0, 1);
  const FlowKeyV4 key = udp_key();
  const Out first = through(nat, FrameSpec::udp4(key, 8), 0);
  for (Nanos t = 100 * kSecond; t <= 1000 * kSecond; t += 100 * kSecond) {
    nat.expire(t);
    const Out again = through(nat, FrameSpec::udp4(key, 8), t);
    ASSERT_EQ(again.key, first.key) << "mapping lost at " << t / kSecond << " s";
  }
  expect_lifetime(nat, key, 1000 * kSecond, nat_timeouts().udp_unreplied);
}

TEST(NatRfc4787, Req8FilteringIsConfigurableAndDropsAreCounted) {
  for (const auto filtering : {NatFiltering::endpoint_independent, NatFiltering::address_dependent}) {
    Nat nat(config(filtering), 0, 1);
    const Out sent = through(nat, FrameSpec::udp4(udp_key(), 8));
    FlowKeyV4 other_port = sent.key.reversed();  // the remote, from another port
    other_port.src_port = to_network16(7777);
    EXPECT_EQ(through(nat, FrameSpec::udp4(other_port, 8)).verdict, Verdict::forward);
    FlowKeyV4 stranger = sent.key.reversed();  // another remote address
    stranger.src_addr = to_network32(0x05060708);
    const Out o = through(nat, FrameSpec::udp4(stranger, 8));
    const bool independent = filtering == NatFiltering::endpoint_independent;
    EXPECT_EQ(o.verdict, independent ? Verdict::forward : Verdict::drop);
    EXPECT_EQ(drops(nat, NfDrop::filtered), independent ? 0u : 1u);
  }
}

// A's packets to B's external endpoint reach B from A's external endpoint, and B's answers come back.
void expect_hairpinning(const FrameSpec& b_opens, const FrameSpec& a_sends_to_b, const FrameSpec& b_answers_a) {
  Nat nat(config(), 0, 1);
  ASSERT_EQ(through(nat, b_opens).verdict, Verdict::forward);
  const Out arrives = through(nat, a_sends_to_b);
  ASSERT_EQ(arrives.verdict, Verdict::forward);
  const NatMapping* a = nat.mapping_of(a_sends_to_b.key4.src_addr, a_sends_to_b.key4.src_port, a_sends_to_b.key4.protocol);
  const NatMapping* b = nat.mapping_of(b_opens.key4.src_addr, b_opens.key4.src_port, b_opens.key4.protocol);
  ASSERT_TRUE(a != nullptr && b != nullptr);
  EXPECT_EQ(arrives.key.src_addr, a->external_addr);  // A appears by its external endpoint
  // An ICMP query carries one identifier, and B must see its own: the one B's query went out with.
  EXPECT_EQ(arrives.key.src_port, b_opens.key4.protocol == ipproto::kIcmp ? b->inside_port : a->external_port);
  EXPECT_EQ(arrives.key.dst_addr, b->inside_addr);
  EXPECT_EQ(arrives.key.dst_port, b->inside_port);
  FrameSpec answer = b_answers_a;
  answer.key4 = arrives.key.reversed();
  const Out back = through(nat, answer);
  ASSERT_EQ(back.verdict, Verdict::forward);
  EXPECT_EQ(back.key, a_sends_to_b.key4.reversed());  // A sees the endpoint it sent to
}

FlowKeyV4 to_external(std::uint32_t host, std::uint16_t sport, std::uint16_t external_port, std::uint8_t protocol) {
  return FlowKeyV4::from_host(kInside + host, kPublic, sport, external_port, protocol);
}

TEST(NatRfc4787, Req9HairpinningUdp) {
  const FlowKeyV4 b = udp_key(6000, 2);  // B's inside port is free: preserved, so its external port is 6000
  expect_hairpinning(FrameSpec::udp4(b, 8), FrameSpec::udp4(to_external(1, 5000, 6000, ipproto::kUdp), 8),
                     FrameSpec::udp4({}, 8));
}

// Fragments of a whole frame (Ethernet, 20-byte IPv4 header, as build_frame makes them): the IP payload
// cut into pieces of `sizes` bytes (multiples of 8), the rest in a last one; in datagram order.
std::vector<std::vector<std::uint8_t>> fragment(const std::vector<std::uint8_t>& whole, std::initializer_list<std::size_t> sizes) {
  constexpr std::size_t kHeaders = 14 + 20;
  std::vector<std::vector<std::uint8_t>> out;
  std::size_t offset = 0;
  const std::size_t payload = whole.size() - kHeaders;
  for (auto it = sizes.begin(); offset < payload; ++it) {
    const std::size_t size = it == sizes.end() ? payload - offset : *it;
    std::vector<std::uint8_t> f(whole.begin(), whole.begin() + kHeaders);
    f.insert(f.end(), whole.begin() + kHeaders + offset, whole.begin() + kHeaders + offset + size);
    std::uint8_t* ip = f.data() + 14;
    store_be16(ip + 2, static_cast<std::uint16_t>(20 + size));
    const bool last = offset + size == payload;
    store_be16(ip + 6, static_cast<std::uint16_t>((offset / 8) | (last ? 0 : 0x2000)));
    store_be16(ip + 10, ipv4_header_checksum({ip, 20}));
    out.push_back(std::move(f));
    offset += size;
  }
  return out;
}

// The whole datagram's frame from its fragments, in any order: the oracle of fragment translation is
// that the translated fragments reassemble to exactly the translated whole packet.
std::vector<std::uint8_t> reassemble(std::vector<std::vector<std::uint8_t>> fragments) {
  const auto offset_of = [](const std::vector<std::uint8_t>& f) { return load_be16(f.data() + 14 + 6) & 0x1fff; };
  std::ranges::sort(fragments, {}, offset_of);
  std::vector<std::uint8_t> whole(fragments[0].begin(), fragments[0].begin() + 34);
  for (const auto& f : fragments) whole.insert(whole.end(), f.begin() + 34, f.end());
  std::uint8_t* ip = whole.data() + 14;
  store_be16(ip + 2, static_cast<std::uint16_t>(whole.size() - 14));
  store_be16(ip + 6, 0);
  store_be16(ip + 10, ipv4_header_checksum({ip, 20}));
  return whole;
}

// `whole` through a NAT that has seen `history`, as one packet and as fragments sent in `order`
// (indexes into the fragments): the fragments that come out reassemble to the translated whole packet.
void expect_fragments_translated(const std::vector<FrameSpec>& history, FrameSpec whole, std::vector<std::size_t> order) {
  whole.ip_id = 0x4d2;
  Nat reference(config(), 0, 1), nat(config(), 0, 1);
  for (const FrameSpec& spec : history) {
    ASSERT_EQ(through(reference, spec).verdict, Verdict::forward);
    ASSERT_EQ(through(nat, spec).verdict, Verdict::forward);
  }
  const Out expected = through(reference, whole);
  ASSERT_EQ(expected.verdict, Verdict::forward);
  const auto pieces = fragment(build_frame(whole), {104, 400});
  ASSERT_EQ(pieces.size(), order.size());
  std::vector<std::vector<std::uint8_t>> out;
  bool first_seen = false;
  for (const std::size_t i : order) {
    const Out o = through_frame(nat, pieces[i]);
    first_seen |= i == 0;
    // A later fragment before its first one waits; after it, it goes straight through.
    EXPECT_EQ(o.verdict, first_seen ? Verdict::forward : Verdict::held) << "fragment " << i;
    if (o.verdict == Verdict::forward) out.push_back(o.frame);
    for (const auto& f : o.released) out.push_back(f);
  }
  ASSERT_EQ(out.size(), pieces.size());
  EXPECT_EQ(reassemble(out), expected.frame);
  EXPECT_EQ(nat.counters().forwarded, reference.counters().forwarded + pieces.size() - 1);
}

TEST(NatRfc4787, Req14OutboundFragmentsInOrder) {
  expect_fragments_translated({}, FrameSpec::udp4(udp_key(), 1000), {0, 1, 2});
  expect_fragments_translated({}, FrameSpec::tcp4(out_key(), kSyn | kAck, 1000), {0, 1, 2});
  expect_fragments_translated({}, [] {
    FrameSpec ping = echo(icmp_key(kInside + 1, kRemote, 99), 8);
    ping.payload_bytes = 1000;
    return ping;
  }(), {0, 1, 2});
}

TEST(NatRfc4787, Req14OutboundFragmentsOutOfOrder) {
  expect_fragments_translated({}, FrameSpec::udp4(udp_key(), 1000), {2, 1, 0});
  expect_fragments_translated({}, FrameSpec::udp4(udp_key(), 1000), {1, 0, 2});
  expect_fragments_translated({}, FrameSpec::tcp4(out_key(), kAck, 1000), {2, 0, 1});
}

TEST(NatRfc4787, Req14InboundFragmentsInAndOutOfOrder) {
  // The inside host's packet made the mapping (its port 40000 is preserved); the answer comes fragmented.
  const FrameSpec request = FrameSpec::udp4(udp_key(), 8);
  const FlowKeyV4 answer = FlowKeyV4::from_host(kRemote, kPublic, 53, 40000, ipproto::kUdp);
  for (const auto& order : {std::vector<std::size_t>{0, 1, 2}, {2, 1, 0}, {1, 2, 0}}) {
    expect_fragments_translated({request}, FrameSpec::udp4(answer, 1000), order);
  }
  // Hairpinned: both addresses of every fragment rewritten.
  expect_fragments_translated({FrameSpec::udp4(udp_key(6000, 2), 8)},
                              FrameSpec::udp4(to_external(1, 5000, 6000, ipproto::kUdp), 1000), {2, 0, 1});
}

TEST(NatRfc4787, Req14HeldFragmentWithoutItsFirstTimesOutAndIsCounted) {
  NatConfig c = config();
  Nat nat(c, 0, 1);
  FrameSpec whole = FrameSpec::udp4(udp_key(), 1000);
  whole.ip_id = 7;
  const auto pieces = fragment(build_frame(whole), {104, 400});
  EXPECT_EQ(through_frame(nat, pieces[1], 0).verdict, Verdict::held);
  nat.expire(c.fragment_timeout - kJustBefore);
  EXPECT_EQ(drops(nat, NfDrop::fragment_timeout), 0u);
  nat.expire(c.fragment_timeout);
  EXPECT_EQ(drops(nat, NfDrop::fragment_timeout), 1u);
  // The first fragment, too late: it goes through, and nothing that timed out comes back.
  const Out first = through_frame(nat, pieces[0], c.fragment_timeout);
  EXPECT_EQ(first.verdict, Verdict::forward);
  EXPECT_TRUE(first.released.empty());
}

TEST(NatRfc4787, Req14FragmentHoldAndCacheAreBoundedWithCountedDrops) {
  NatConfig c = config();
  c.fragments_held = 2;
  c.fragment_datagrams = 2;
  Nat nat(c, 0, 1);
  const auto pieces_of = [](std::uint16_t id) {
    FrameSpec whole = FrameSpec::udp4(udp_key(), 1000);
    whole.ip_id = id;
    return fragment(build_frame(whole), {104, 400});
  };
  // The hold: two later fragments wait, a third is refused.
  EXPECT_EQ(through_frame(nat, pieces_of(1)[2]).verdict, Verdict::held);
  EXPECT_EQ(through_frame(nat, pieces_of(2)[2]).verdict, Verdict::held);
  EXPECT_EQ(through_frame(nat, pieces_of(3)[2]).verdict, Verdict::drop);
  EXPECT_EQ(drops(nat, NfDrop::fragment_full), 1u);
  // The cache: two datagrams remembered (their held fragments released), a third first fragment refused.
  const Out first1 = through_frame(nat, pieces_of(1)[0]);
  const Out first2 = through_frame(nat, pieces_of(2)[0]);
  EXPECT_EQ(first1.verdict, Verdict::forward);
  EXPECT_EQ(first2.verdict, Verdict::forward);
  EXPECT_EQ(first1.released.size() + first2.released.size(), 2u);
  EXPECT_EQ(through_frame(nat, pieces_of(3)[0]).verdict, Verdict::drop);
  EXPECT_EQ(drops(nat, NfDrop::fragment_full), 2u);
  // Once the remembered datagrams have lived their time, their slots serve new ones.
  EXPECT_EQ(through_frame(nat, pieces_of(3)[0], c.fragment_timeout).verdict, Verdict::forward);
  EXPECT_EQ(through_frame(nat, pieces_of(3)[1], c.fragment_timeout).verdict, Verdict::forward);
}

TEST(NatRfc4787, Req12IcmpErrorsNeitherEndNorRefreshAMapping) {
  Nat nat(config(), 0, 1);
  const FlowKeyV4 key = udp_key();
  const Out sent = through(nat, FrameSpec::udp4(key, 20), 0);
  const Nanos deadline = nat.sessions().deadline(nat.sessions().find(key, flow_hash(key)).conn);
  // Port unreachable, host unreachable, fragmentation needed, admin prohibited: from outside.
  for (const std::uint8_t code : {3, 1, 4, 13}) {
    const Out o = through(nat, icmp_error(0x01020304, kPublic, sent.frame, code), 100 * kSecond);
    EXPECT_EQ(o.verdict, Verdict::forward);
  }
  EXPECT_EQ(nat.sessions().deadline(nat.sessions().find(key, flow_hash(key)).conn), deadline);
  expect_lifetime(nat, key, 0, nat_timeouts().udp_unreplied);
}

// ---------------------------------------------------------------------------------------------------
// RFC 5382 (TCP)

TEST(NatRfc5382, Req1EndpointIndependentMapping) {
  Nat nat(config(), 0, 1);
  const Connection first(nat, out_key(40000, 1, kRemote, 443));
  for (const std::uint32_t remote : {0x01010101u, 0x02020202u}) {
    const Connection other(nat, out_key(40000, 1, remote, 80));
    EXPECT_EQ(other.outside.dst_addr, first.outside.dst_addr);
    EXPECT_EQ(other.outside.dst_port, first.outside.dst_port);
  }
  EXPECT_EQ(nat.mapping_count(), 1u);
}

TEST(NatRfc5382, Req2SimultaneousOpen) {
  Nat nat(config(), 0, 1);
  const Connection c(nat, out_key());
  c.in(kSyn);  // the remote's own SYN crosses ours
  EXPECT_EQ(c.state(), TcpState::syn_recv);
  c.out(kSyn | kAck);
  c.in(kSyn | kAck);
  c.out(kAck);
  c.in(kAck);
  EXPECT_EQ(c.state(), TcpState::established);
  expect_lifetime(nat, c.inside, 0, nat_timeouts().tcp_timeout(TcpState::established));
}

TEST(NatRfc5382, Req2SynAckRetransmission) {
  Nat nat(config(), 0, 1);
  const Connection c(nat, out_key());
  c.out(kSyn);  // our SYN retransmitted
  c.in(kSyn | kAck);
  c.in(kSyn | kAck);  // the remote did not see our ACK
  c.out(kAck);
  c.in(kSyn | kAck);  // still retransmitting
  c.out(kAck);
  c.in(kAck | kPsh);
  EXPECT_EQ(c.state(), TcpState::established);
}

TEST(NatRfc5382, Req2CloseFromInside) {
  Nat nat(config(), 0, 1);
  const Connection c(nat, out_key());
  c.handshake();
  c.out(kFin | kAck, kSecond);
  c.in(kAck, kSecond);
  c.in(kFin | kAck, kSecond);
  c.out(kAck, kSecond);
  EXPECT_EQ(c.state(), TcpState::time_wait);
  expect_lifetime(nat, c.inside, kSecond, nat_timeouts().tcp_timeout(TcpState::time_wait));
}

TEST(NatRfc5382, Req2CloseFromOutside) {
  Nat nat(config(), 0, 1);
  const Connection c(nat, out_key());
  c.handshake();
  c.in(kFin | kAck, kSecond);
  c.out(kAck, kSecond);
  c.out(kFin | kAck, kSecond);
  c.in(kAck, kSecond);
  EXPECT_EQ(c.state(), TcpState::time_wait);
  expect_lifetime(nat, c.inside, kSecond, nat_timeouts().tcp_timeout(TcpState::time_wait));
}

TEST(NatRfc5382, Req2CloseFromBothAtOnce) {
  Nat nat(config(), 0, 1);
  const Connection c(nat, out_key());
  c.handshake();
  c.out(kFin | kAck, kSecond);
  c.in(kFin | kAck, kSecond);  // the FINs cross
  c.out(kAck, kSecond);
  c.in(kAck, kSecond);
  EXPECT_EQ(c.state(), TcpState::time_wait);
  expect_lifetime(nat, c.inside, kSecond, nat_timeouts().tcp_timeout(TcpState::time_wait));
}

TEST(NatRfc5382, Req2HalfCloseKeepsTheOtherDirectionFlowing) {
  Nat nat(config(), 0, 1);
  const Connection c(nat, out_key());
  c.handshake();
  c.out(kFin | kAck, 0);
  c.in(kAck, 0);
  EXPECT_EQ(c.state(), TcpState::close_wait);
  // The remote keeps sending for a long time, each segment within the transitory timeout.
  const Nanos step = nat_timeouts().tcp_timeout(TcpState::close_wait) - kSecond;
  Nanos t = 0;
  for (int i = 1; i <= 10; ++i) {
    t = i * step;
    nat.expire(t);
    c.in(kAck | kPsh, t);
    c.out(kAck, t);
  }
  c.in(kFin | kAck, t);
  c.out(kAck, t);
  EXPECT_EQ(c.state(), TcpState::time_wait);
}

TEST(NatRfc5382, Req2ReopenOfAClosedTuple) {
  Nat nat(config(), 0, 1);
  const Connection c(nat, out_key());
  c.handshake();
  c.out(kFin | kAck);
  c.in(kFin | kAck);
  c.out(kAck);
  c.in(kAck);
  ASSERT_EQ(c.state(), TcpState::time_wait);
  // While the closed session lingers, a new SYN on the same 5-tuple reopens it, on the same mapping.
  c.out(kSyn, kSecond);
  EXPECT_EQ(c.state(), TcpState::syn_sent);
  c.handshake(kSecond);
  EXPECT_EQ(c.state(), TcpState::established);
  // After a RST, likewise.
  c.in(kRst, 2 * kSecond);
  EXPECT_EQ(c.state(), TcpState::close);
  c.out(kSyn, 3 * kSecond);
  c.handshake(3 * kSecond);
  EXPECT_EQ(c.state(), TcpState::established);
  // Once the session has expired, the tuple opens a new mapping: its old port is in quarantine.
  c.in(kRst, 4 * kSecond);
  nat.expire(4 * kSecond + nat_timeouts().tcp_timeout(TcpState::close) + kJustAfter);
  ASSERT_FALSE(has_session(nat, c.inside));
  const Connection again(nat, c.inside, 300 * kSecond);
  EXPECT_NE(again.outside.dst_port, c.outside.dst_port);
  again.handshake(300 * kSecond);
}

TEST(NatRfc5382, Req4UnsolicitedSynGetsNoReplyAndALaterOutboundSynConnects) {
  NatConfig c = config();
  c.icmp_on_exhaustion = true;  // the NAT may answer its own refusals, but never an unsolicited SYN
  Nat nat(c, 0, 1);
  const FlowKeyV4 inside = out_key(40000);
  const FlowKeyV4 unsolicited = FlowKeyV4::from_host(kRemote, kPublic, 443, 40000, ipproto::kTcp);
  const Out o = tcp(nat, unsolicited, kSyn, 0);
  EXPECT_EQ(o.verdict, Verdict::drop);  // nothing goes back to the remote: no RST, no ICMP
  EXPECT_EQ(o.frame, build_frame(FrameSpec::tcp4(unsolicited, kSyn, 10)));
  EXPECT_EQ(drops(nat, NfDrop::no_mapping), 1u);
  EXPECT_EQ(nat.sessions().size(), 0u);
  // Within 6 s the inside host's own SYN for the same pair goes out; the remote's retransmitted SYN
  // then completes a simultaneous open.
  const Connection conn(nat, inside, 3 * kSecond);
  ASSERT_EQ(conn.outside, unsolicited);  // the inside port was free: preserved
  conn.in(kSyn, 5 * kSecond);
  conn.out(kSyn | kAck, 5 * kSecond);
  conn.in(kAck, 5 * kSecond);
  EXPECT_EQ(conn.state(), TcpState::established);
}

TEST(NatRfc5382, Req5EstablishedIdleTimeoutAtLeastTwoHoursFourMinutes) {
  Nat nat(config(), 0, 1);
  EXPECT_GE(nat_timeouts().tcp_timeout(TcpState::established), 7440 * kSecond);
  const Connection c(nat, out_key());
  c.handshake(kSecond);
  expect_lifetime(nat, c.inside, kSecond, nat_timeouts().tcp_timeout(TcpState::established));
}

TEST(NatRfc5382, Req5TransitoryIdleTimeoutAtLeastFourMinutes) {
  // Each transitory state: partly open (syn_sent, syn_recv) or partly closed (fin_wait, close_wait, last_ack, time_wait).
  const std::vector<std::vector<std::pair<bool, std::uint8_t>>> openings = {
      {},                                                                        // syn_sent
      {{false, kSyn | kAck}},                                                    // syn_recv
      {{false, kSyn | kAck}, {true, kAck}, {true, kFin | kAck}},                 // fin_wait
      {{false, kSyn | kAck}, {true, kAck}, {true, kFin | kAck}, {false, kAck}},  // close_wait
      {{false, kSyn | kAck}, {true, kAck}, {true, kFin | kAck}, {false, kFin | kAck}},  // last_ack
  };
  for (const auto& packets : openings) {
    Nat nat(config(), 0, 1);
    const Connection c(nat, out_key());
    for (const auto& [outbound, flags] : packets) outbound ? c.out(flags) : c.in(flags);
    const TcpState state = c.state();
    ASSERT_NE(state, TcpState::established);
    EXPECT_GE(nat_timeouts().tcp_timeout(state), 240 * kSecond) << tcp_state_name(state);
    expect_lifetime(nat, c.inside, 0, nat_timeouts().tcp_timeout(state));
  }
}

TEST(NatRfc5382, Req7NoPortOverloading) { expect_no_port_overloading(ipproto::kTcp); }

TEST(NatRfc5382, Req8HairpinningTcp) {
  const FlowKeyV4 b = out_key(6000, 2);
  expect_hairpinning(FrameSpec::tcp4(b, kSyn), FrameSpec::tcp4(to_external(1, 5000, 6000, ipproto::kTcp), kSyn),
                     FrameSpec::tcp4({}, kSyn | kAck));
}

TEST(NatRfc5382, Req9IcmpErrorsNeverEndATcpSession) {
  Nat nat(config(), 0, 1);
  const Connection c(nat, out_key());
  c.handshake();
  const Out data = tcp(nat, c.inside, kAck | kPsh, kSecond);
  const Nanos deadline = nat.sessions().deadline(nat.sessions().find(c.inside, flow_hash(c.inside)).conn);
  for (const std::uint8_t code : {0, 1, 3, 13}) {  // net, host, port unreachable, prohibited
    const Out o = through(nat, icmp_error(0x01020304, kPublic, data.frame, code), 2 * kSecond);
    ASSERT_EQ(o.verdict, Verdict::forward);
    EXPECT_EQ(parsed(o).embedded_key4, c.inside);
  }
  EXPECT_EQ(c.state(), TcpState::established);
  EXPECT_EQ(nat.sessions().deadline(nat.sessions().find(c.inside, flow_hash(c.inside)).conn), deadline);
  c.in(kAck, 3 * kSecond);
}

// ---------------------------------------------------------------------------------------------------
// RFC 5508 (ICMP)

TEST(NatRfc5508, Req1IcmpQueryMappingLivesAtLeastSixtySeconds) {
  Nat nat(config(), 0, 1);
  EXPECT_GE(nat_timeouts().icmp, 60 * kSecond);
  const FlowKeyV4 key = icmp_key(kInside + 1, kRemote, 777);
  const Out request = through(nat, echo(key, 8), 0);
  ASSERT_EQ(request.verdict, Verdict::forward);
  const Out reply = through(nat, echo(request.key.reversed(), 0), 0);
  EXPECT_EQ(reply.key, key.reversed());
  expect_lifetime(nat, key, 0, nat_timeouts().icmp);
}

TEST(NatRfc5508, Req3EchoIdentifierTranslatedBothWays) {
  Nat nat(config(), 0, 1);
  // Two hosts using the same identifier: two external identifiers, each reply to its own host.
  const Out a = through(nat, echo(icmp_key(kInside + 1, kRemote, 9), 8));
  const Out b = through(nat, echo(icmp_key(kInside + 2, kRemote, 9), 8));
  EXPECT_NE(a.key.src_port, b.key.src_port);
  EXPECT_EQ(through(nat, echo(b.key.reversed(), 0)).key, icmp_key(kRemote, kInside + 2, 9));
  EXPECT_EQ(through(nat, echo(a.key.reversed(), 0)).key, icmp_key(kRemote, kInside + 1, 9));
}

// Every checksum (outer ICMP, quoted IP header, quoted transport) is checked by through().
TEST(NatRfc5508, Req4IcmpErrorsTranslatedWithTheQuotedPacket) {
  Nat nat(config(), 0, 1);
  const std::vector<FrameSpec> sent = {FrameSpec::udp4(udp_key(), 30), FrameSpec::tcp4(out_key(), kSyn, 0),
                                       echo(icmp_key(kInside + 1, kRemote, 31), 8)};
  for (const FrameSpec& spec : sent) {
    const Out out = through(nat, spec);
    // Inbound: a router outside answers the translated packet: back to the inside host, quote restored.
    const Out in = through(nat, icmp_error(0x01020304, kPublic, out.frame, 1));
    ASSERT_EQ(in.verdict, Verdict::forward);
    EXPECT_EQ(in.key.dst_addr, spec.key4.src_addr);
    EXPECT_EQ(parsed(in).embedded_key4, spec.key4);
  }
  // Outbound: the inside host refuses a packet the remote sent to its external endpoint.
  const Out udp_out = through(nat, FrameSpec::udp4(udp_key(), 8));
  const Out delivered = through(nat, FrameSpec::udp4(udp_out.key.reversed(), 12));
  const Out refusal = through(nat, icmp_error(kInside + 1, kRemote, delivered.frame, 3));
  ASSERT_EQ(refusal.verdict, Verdict::forward);
  EXPECT_EQ(refusal.key.src_addr, to_network32(kPublic));
  EXPECT_EQ(parsed(refusal).embedded_key4, udp_out.key.reversed());  // as the remote sent it
}

TEST(NatRfc5508, IcmpErrorFromTheWrongSideIsDroppedAndCounted) {
  Nat nat(config(), 0, 1);
  const Out out = through(nat, FrameSpec::udp4(udp_key(), 8));
  // An outsider forges an error quoting the packet as the inside host sent it (its private side).
  const std::vector<std::uint8_t> inside_view = build_frame(FrameSpec::udp4(udp_key(), 8));
  const Out forged = through(nat, icmp_error(kRemote, kPublic, inside_view));
  EXPECT_EQ(forged.verdict, Verdict::drop);
  // An inside host forges an error about the translated packet, addressed elsewhere.
  const Out inside_forged = through(nat, icmp_error(kInside + 9, kRemote, out.frame));
  EXPECT_EQ(inside_forged.verdict, Verdict::drop);
  EXPECT_EQ(drops(nat, NfDrop::untranslatable), 2u);
}

// ---------------------------------------------------------------------------------------------------
// RFC 6888 (carrier-grade NAT)

TEST(NatRfc6888, Req8FreedPortsWaitTheQuarantine) {
  NatConfig c = config();
  EXPECT_EQ(c.port_quarantine, 120 * kSecond);  // the default
  c.port_first = 2000;
  c.port_last = 2001;
  Nat nat(c, 0, 1);
  const FlowKeyV4 key = udp_key(2000);
  ASSERT_EQ(through(nat, FrameSpec::udp4(key, 8), 0).key.src_port, to_network16(2000));
  const Nanos freed = nat_timeouts().udp_unreplied + kJustAfter;
  nat.expire(freed);
  ASSERT_FALSE(has_mapping(nat, key));
  // Just before the quarantine ends, 2000 is not handed out again (2001 is); just after, it is.
  EXPECT_EQ(through(nat, FrameSpec::udp4(udp_key(2000, 2), 8), freed + c.port_quarantine - kJustBefore).key.src_port,
            to_network16(2001));
  EXPECT_EQ(through(nat, FrameSpec::udp4(key, 8), freed + c.port_quarantine).key.src_port, to_network16(2000));
}

TEST(NatRfc6888, Req11ExhaustionDropsAndNeverEvicts) {
  NatConfig c = config();
  c.port_first = 3000;
  c.port_last = 3015;
  Nat nat(c, 0, 1);
  std::vector<Out> held;
  for (std::uint16_t i = 0; i < 16; ++i) held.push_back(through(nat, FrameSpec::udp4(udp_key(3000 + i), 8)));
  for (const Out& o : held) ASSERT_EQ(o.verdict, Verdict::forward);
  // Many new mappings, from many hosts, all refused and counted; nothing loops, nothing is evicted.
  for (std::uint32_t host = 2; host < 1002; ++host) {
    const Out o = through(nat, FrameSpec::udp4(udp_key(4000, host), 8));
    ASSERT_EQ(o.verdict, Verdict::drop);
  }
  EXPECT_EQ(drops(nat, NfDrop::no_port), 1000u);
  EXPECT_EQ(nat.mapping_count(), 16u);
  for (std::uint16_t i = 0; i < 16; ++i) {
    EXPECT_EQ(through(nat, FrameSpec::udp4(udp_key(3000 + i), 8)).key, held[i].key);
    EXPECT_EQ(through(nat, FrameSpec::udp4(held[i].key.reversed(), 8)).key, udp_key(3000 + i).reversed());
  }
  // Every mapping ends: every port is in quarantine, still none to give, until the quarantine is over.
  const Nanos ended = nat_timeouts().udp_replied + kJustAfter;
  nat.expire(ended);
  ASSERT_EQ(nat.mapping_count(), 0u);
  EXPECT_EQ(through(nat, FrameSpec::udp4(udp_key(4000, 2), 8), ended).verdict, Verdict::drop);
  EXPECT_EQ(drops(nat, NfDrop::no_port), 1001u);
  EXPECT_EQ(through(nat, FrameSpec::udp4(udp_key(4000, 2), 8), ended + c.port_quarantine).verdict, Verdict::forward);
}

TEST(NatRfc6888, Req4PerSubscriberPortQuota) {
  NatConfig c = config();
  c.port_quota = 3;
  Nat nat(c, 0, 1);
  std::vector<Out> udp;
  for (std::uint16_t i = 0; i < 3; ++i) udp.push_back(through(nat, FrameSpec::udp4(udp_key(5000 + i), 8), 0));
  for (const Out& o : udp) ASSERT_EQ(o.verdict, Verdict::forward);
  // A fourth UDP mapping for host 1 is refused and counted; its three mappings are untouched, and a new
  // session on one of them (another remote) needs no new mapping.
  const Out refused = through(nat, FrameSpec::udp4(udp_key(5003), 8), 0);
  EXPECT_EQ(refused.verdict, Verdict::drop);
  EXPECT_EQ(drops(nat, NfDrop::port_quota), 1u);
  EXPECT_EQ(drops(nat, NfDrop::no_port), 0u);
  for (std::uint16_t i = 0; i < 3; ++i) EXPECT_EQ(through(nat, FrameSpec::udp4(udp_key(5000 + i), 8), 0).key, udp[i].key);
  EXPECT_EQ(through(nat, FrameSpec::udp4(udp_key(5000, 1, 0x01010101), 8), 0).verdict, Verdict::forward);
  // The quota is per protocol and per inside address.
  for (std::uint16_t i = 0; i < 3; ++i) EXPECT_EQ(tcp(nat, out_key(5000 + i, 1), kSyn).verdict, Verdict::forward);
  EXPECT_EQ(tcp(nat, out_key(5003, 1), kSyn).verdict, Verdict::drop);
  EXPECT_EQ(through(nat, FrameSpec::udp4(udp_key(5003, 2), 8), 0).verdict, Verdict::forward);
  EXPECT_EQ(drops(nat, NfDrop::port_quota), 2u);
  // Once host 1's UDP mappings have expired, it may map again.
  nat.expire(nat_timeouts().udp_unreplied + kJustAfter);
  EXPECT_EQ(through(nat, FrameSpec::udp4(udp_key(5003), 8), nat_timeouts().udp_unreplied + kJustAfter).verdict, Verdict::forward);
}

// The ICMP answer to a refused packet: from the public address paired with the host, to the host, type 3
// code 13, quoting the refused packet's IP header and 8 bytes; the MACs swapped; checksums by through().
void expect_prohibited_answer(const Out& answer, const std::vector<std::uint8_t>& refused) {
  ASSERT_EQ(answer.verdict, Verdict::reply);
  EXPECT_EQ(answer.wire_length, answer.frame.size());
  const ParsedPacket p = parsed(answer);
  ParsedPacket original;
  ASSERT_EQ(parse_frame(refused, LinkType::ethernet, original), ParseStatus::ok);
  EXPECT_EQ(p.key4.src_addr, to_network32(kPublic));
  EXPECT_EQ(p.key4.dst_addr, original.key4.src_addr);
  EXPECT_EQ(p.icmp_type, 3);
  EXPECT_EQ(p.icmp_code, 13);
  ASSERT_TRUE(p.has_embedded);
  EXPECT_EQ(p.embedded_key4, original.key4);
  const std::size_t quote = 20 + 8;
  ASSERT_EQ(answer.frame.size(), 14 + 20 + 8 + quote);
  EXPECT_TRUE(std::equal(refused.begin() + 14, refused.begin() + 14 + quote, answer.frame.begin() + 14 + 28));
  EXPECT_TRUE(std::equal(refused.begin(), refused.begin() + 6, answer.frame.begin() + 6));  // MACs swapped
  EXPECT_TRUE(std::equal(refused.begin() + 6, refused.begin() + 12, answer.frame.begin()));
}

TEST(NatRfc6888, Req11ExhaustionAnswersIcmpAdministrativelyProhibited) {
  NatConfig c = config();
  c.port_first = 3000;
  c.port_last = 3001;
  c.icmp_on_exhaustion = true;
  Nat nat(c, 0, 1);
  ASSERT_EQ(tcp(nat, out_key(3000, 1), kSyn).verdict, Verdict::forward);
  ASSERT_EQ(tcp(nat, out_key(3001, 2), kSyn).verdict, Verdict::forward);
  const FrameSpec syn = FrameSpec::tcp4(out_key(3002, 3), kSyn, 100);
  expect_prohibited_answer(through(nat, syn), build_frame(syn));
  const FrameSpec datagram = FrameSpec::udp4(udp_key(3000, 3), 8);
  ASSERT_EQ(through(nat, datagram).verdict, Verdict::forward);  // UDP has its own ports
  ASSERT_EQ(through(nat, FrameSpec::udp4(udp_key(3001, 3), 8)).verdict, Verdict::forward);
  const FrameSpec third = FrameSpec::udp4(udp_key(3002, 3), 400);
  expect_prohibited_answer(through(nat, third), build_frame(third));
  EXPECT_EQ(drops(nat, NfDrop::no_port), 2u);
  // No room for the answer: a plain counted drop, the frame untouched.
  const Out cramped = through(nat, FrameSpec::tcp4(out_key(3003, 3), kSyn), 0, 0);
  EXPECT_EQ(cramped.verdict, Verdict::drop);
  EXPECT_EQ(cramped.frame, build_frame(FrameSpec::tcp4(out_key(3003, 3), kSyn)));
  EXPECT_EQ(drops(nat, NfDrop::no_port), 3u);
  // An ICMP error is never answered, even one the NAT cannot translate.
  const Out error = through(nat, icmp_error(kInside + 3, kRemote, build_frame(FrameSpec::udp4(FlowKeyV4::from_host(kRemote, kInside + 3, 1, 2, ipproto::kUdp), 8))));
  EXPECT_EQ(error.verdict, Verdict::drop);
}

TEST(NatRfc6888, Req4QuotaRefusalAnswersIcmpAdministrativelyProhibited) {
  NatConfig c = config();
  c.port_quota = 1;
  c.icmp_on_exhaustion = true;
  Nat nat(c, 0, 1);
  ASSERT_EQ(through(nat, echo(icmp_key(kInside + 1, kRemote, 1), 8)).verdict, Verdict::forward);
  const FrameSpec second = echo(icmp_key(kInside + 1, kRemote, 2), 8);
  expect_prohibited_answer(through(nat, second), build_frame(second));
  EXPECT_EQ(drops(nat, NfDrop::port_quota), 1u);
}

// ---------------------------------------------------------------------------------------------------
// Port range edges and per-core slices.

TEST(NatPorts, EveryRangeEdgeAllocatesTranslatesAndReturnsToItsCore) {
  NatConfig c = config();
  for (const unsigned cores : {1u, 2u, 3u, 7u}) {
    for (unsigned core = 0; core < cores; ++core) {
      Nat nat(c, core, cores);
      std::vector<std::uint16_t> edges = {nat.port_first(), nat.port_last()};
      if (core == 0) edges.push_back(1024);
      if (core + 1 == cores) edges.push_back(65535);
      for (const std::uint16_t port : edges) {
        const FlowKeyV4 key = udp_key(port, port);  // one host per edge: each mapping is new
        const Out o = through(nat, FrameSpec::udp4(key, 8));
        ASSERT_EQ(o.verdict, Verdict::forward);
        EXPECT_EQ(o.key.src_port, to_network16(port)) << cores << " cores, core " << core;
        EXPECT_EQ(nat_owner_of_port(c, cores, port), core) << port;
        const Out back = through(nat, FrameSpec::udp4(o.key.reversed(), 8));
        EXPECT_EQ(back.key, key.reversed());
      }
    }
  }
}

TEST(NatPorts, AReplyLandsOnTheCoreThatOwnsItsPort) {
  NatConfig c = config();
  constexpr unsigned kCores = 3;
  std::vector<std::unique_ptr<Nat>> cores;
  for (unsigned i = 0; i < kCores; ++i) cores.push_back(std::make_unique<Nat>(c, i, kCores));
  for (std::uint32_t host = 1; host <= 60; ++host) {
    const unsigned core = host % kCores;
    const FlowKeyV4 key = udp_key(static_cast<std::uint16_t>(1000 + host), host);
    const Out o = through(*cores[core], FrameSpec::udp4(key, 8));
    const unsigned owner = nat_owner_of_port(c, kCores, to_host16(o.key.src_port));
    ASSERT_EQ(owner, core);
    EXPECT_EQ(through(*cores[owner], FrameSpec::udp4(o.key.reversed(), 8)).key, key.reversed());
  }
}

// ---------------------------------------------------------------------------------------------------
// RFC 7857 (updates)

TEST(NatRfc7857, TcpSessionKeptFourMinutesAfterRst) {
  Nat nat(config(), 0, 1);
  const Connection c(nat, out_key());
  c.handshake();
  c.in(kRst, 10 * kSecond);
  EXPECT_EQ(c.state(), TcpState::close);
  EXPECT_EQ(nat_timeouts().tcp_timeout(TcpState::close), 240 * kSecond);
  expect_lifetime(nat, c.inside, 10 * kSecond, 240 * kSecond);
}

TEST(NatRfc7857, HairpinningIcmpEcho) {
  // B pings out, so its identifier is mapped; A pings B's external address with B's external identifier.
  const FlowKeyV4 b = icmp_key(kInside + 2, kRemote, 4242);  // free: preserved as the external identifier
  expect_hairpinning(echo(b, 8), echo(icmp_key(kInside + 1, kPublic, 4242), 8), echo({}, 0));
}

TEST(NatRfc7857, HairpinningIcmpErrors) {
  Nat nat(config(), 0, 1);
  const FlowKeyV4 b = udp_key(6000, 2);
  const FlowKeyV4 a_to_b = to_external(1, 5000, 6000, ipproto::kUdp);
  ASSERT_EQ(through(nat, FrameSpec::udp4(b, 8)).verdict, Verdict::forward);
  const Out at_b = through(nat, FrameSpec::udp4(a_to_b, 16));
  // B refuses A's packet: A gets the error from B's external address, quoting what A sent.
  const Out at_a = through(nat, icmp_error(kInside + 2, kPublic, at_b.frame));
  ASSERT_EQ(at_a.verdict, Verdict::forward);
  EXPECT_EQ(at_a.key.src_addr, to_network32(kPublic));
  EXPECT_EQ(at_a.key.dst_addr, a_to_b.src_addr);
  EXPECT_EQ(parsed(at_a).embedded_key4, a_to_b);
  // B answers; A refuses the answer: B gets the error from A's external address, quoting what B sent.
  const Out answer_at_a = through(nat, FrameSpec::udp4(at_b.key.reversed(), 16));
  const Out at_b_again = through(nat, icmp_error(kInside + 1, kPublic, answer_at_a.frame));
  ASSERT_EQ(at_b_again.verdict, Verdict::forward);
  EXPECT_EQ(at_b_again.key.dst_addr, b.src_addr);
  EXPECT_EQ(parsed(at_b_again).embedded_key4, at_b.key.reversed());
}

}  // namespace
}  // namespace flowtrack
