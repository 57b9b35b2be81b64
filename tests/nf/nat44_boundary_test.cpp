// The NAT as a boundary (nat44.hpp, "Sides"): by the port a packet came through (inside, outside) and,
// on a replay, by its addresses; every combination of arrival, source class and destination class
// (inside network, pool, other), each ending translated, passed untouched or dropped for a named reason.
#include <gtest/gtest.h>

#include <string>

#include "nat_frames.hpp"

namespace flowtrack {
namespace {

using namespace nat_frames;

enum class Place : std::uint8_t { inside, pool, other };
enum class Outcome : std::uint8_t { translated, passed, not_to_pool, spoofed_source };

std::string place_name(Place p) { return p == Place::inside ? "inside" : p == Place::pool ? "pool" : "other"; }

struct BoundaryCase {
  PortRole arrival;
  Place source, destination;
  Outcome outcome;
};

// What each arrival does with each (source, destination). Every destination is an endpoint a packet
// could want: an inside host (10.0.0.1:40000, whose mapping exists), that mapping's external endpoint
// on the pool address, a host elsewhere. With endpoint-independent filtering the mapping admits anyone.
constexpr BoundaryCase kCases[] = {
    // A replay: by address. What touches neither the inside network (as source) nor the pool passes,
    // an outside host's packet to an inside host included: there is no port to say it came from outside.
    {PortRole::unknown, Place::inside, Place::inside, Outcome::passed},
    {PortRole::unknown, Place::inside, Place::pool, Outcome::translated},  // hairpinned to the mapping's host
    {PortRole::unknown, Place::inside, Place::other, Outcome::translated},
    {PortRole::unknown, Place::pool, Place::inside, Outcome::passed},
    {PortRole::unknown, Place::pool, Place::pool, Outcome::translated},
    {PortRole::unknown, Place::pool, Place::other, Outcome::passed},
    {PortRole::unknown, Place::other, Place::inside, Outcome::passed},
    {PortRole::unknown, Place::other, Place::pool, Outcome::translated},
    {PortRole::unknown, Place::other, Place::other, Outcome::passed},
    // The inside port: only the inside network's sources (BCP 38); between inside hosts, untouched.
    {PortRole::inside, Place::inside, Place::inside, Outcome::passed},
    {PortRole::inside, Place::inside, Place::pool, Outcome::translated},
    {PortRole::inside, Place::inside, Place::other, Outcome::translated},
    {PortRole::inside, Place::pool, Place::inside, Outcome::spoofed_source},
    {PortRole::inside, Place::pool, Place::pool, Outcome::spoofed_source},
    {PortRole::inside, Place::pool, Place::other, Outcome::spoofed_source},
    {PortRole::inside, Place::other, Place::inside, Outcome::spoofed_source},
    {PortRole::inside, Place::other, Place::pool, Outcome::spoofed_source},
    {PortRole::inside, Place::other, Place::other, Outcome::spoofed_source},
    // The outside port: only to the pool, never from the inside network or the pool itself.
    {PortRole::outside, Place::inside, Place::inside, Outcome::spoofed_source},
    {PortRole::outside, Place::inside, Place::pool, Outcome::spoofed_source},
    {PortRole::outside, Place::inside, Place::other, Outcome::spoofed_source},
    {PortRole::outside, Place::pool, Place::inside, Outcome::spoofed_source},
    {PortRole::outside, Place::pool, Place::pool, Outcome::spoofed_source},
    {PortRole::outside, Place::pool, Place::other, Outcome::spoofed_source},
    {PortRole::outside, Place::other, Place::inside, Outcome::not_to_pool},
    {PortRole::outside, Place::other, Place::pool, Outcome::translated},
    {PortRole::outside, Place::other, Place::other, Outcome::not_to_pool},
};

constexpr std::uint16_t kMappedPort = 40000;  // the inside host's port, kept as its external port

// A NAT in which the inside host 10.0.0.1:40000 holds a TCP mapping (its SYN to a remote went out).
struct MappedNat {
  Nat nat{config(), 0, 1};
  MappedNat() {
    const Out opened = tcp(nat, out_key(kMappedPort, 1, kRemote, 443), tcpflag::kSyn);
    EXPECT_EQ(opened.verdict, Verdict::forward);
    EXPECT_EQ(to_host16(opened.key.src_port), kMappedPort);  // port preserved: the endpoint below is the mapping's
  }
};

FlowKeyV4 case_key(Place source, Place destination) {
  const std::uint32_t from = source == Place::inside ? kInside + 2 : source == Place::pool ? kPublic : 0xc6336409;  // 198.51.100.9
  const std::uint32_t to = destination == Place::inside ? kInside + 1 : destination == Place::pool ? kPublic : 0xc0000207;  // 192.0.2.7
  const std::uint16_t to_port = destination == Place::other ? 80 : kMappedPort;
  return FlowKeyV4::from_host(from, to, 5555, to_port, ipproto::kTcp);
}

TEST(Nat44Boundary, EveryArrivalSourceAndDestinationHasItsOutcome) {
  for (const BoundaryCase& c : kCases) {
    const std::string name = std::string(port_role_name(c.arrival)) + ": " + place_name(c.source) + " -> " + place_name(c.destination);
    MappedNat mapped;
    Nat& nat = mapped.nat;
    const NfCounters before = nat.counters();
    const Out out = through(nat, FrameSpec::tcp4(case_key(c.source, c.destination), tcpflag::kSyn, 10), 0, kRoom, c.arrival);
    const NfCounters& after = nat.counters();
    switch (c.outcome) {
      case Outcome::translated:
        EXPECT_EQ(out.verdict, Verdict::forward) << name;
        EXPECT_EQ(after.rewritten, before.rewritten + 1) << name;
        break;
      case Outcome::passed:
        EXPECT_EQ(out.verdict, Verdict::forward) << name;
        EXPECT_EQ(after.passed, before.passed + 1) << name;
        EXPECT_EQ(out.key, case_key(c.source, c.destination)) << name;  // untouched
        break;
      case Outcome::not_to_pool:
      case Outcome::spoofed_source: {
        const NfDrop reason = c.outcome == Outcome::not_to_pool ? NfDrop::not_to_pool : NfDrop::spoofed_source;
        EXPECT_EQ(out.verdict, Verdict::drop) << name;
        EXPECT_EQ(drops(nat, reason), 1u) << name;
        EXPECT_EQ(nat.sessions().size(), 1u) << name;  // nothing opened
        break;
      }
    }
  }
}

// What the live scenario sends at an inside host from outside: a ping, a SYN, a datagram. Each is
// dropped as not_to_pool through the outside port; on a replay each passes (the address rule).
TEST(Nat44Boundary, TheOutsideReachesNoInsideHostThroughTheOutsidePort) {
  FrameSpec ping;
  ping.key4 = FlowKeyV4::from_host(kRemote, kInside + 1, 99, 99, ipproto::kIcmp);
  ping.icmp_type = 8;
  const FrameSpec probes[] = {ping, FrameSpec::tcp4(FlowKeyV4::from_host(kRemote, kInside + 1, 5555, 22, ipproto::kTcp), tcpflag::kSyn),
                              FrameSpec::udp4(FlowKeyV4::from_host(kRemote, kInside + 1, 5555, 53, ipproto::kUdp), 8)};
  MappedNat port, replay;
  for (const FrameSpec& probe : probes) {
    EXPECT_EQ(through(port.nat, probe, 0, kRoom, PortRole::outside).verdict, Verdict::drop);
    EXPECT_EQ(through(replay.nat, probe, 0, kRoom, PortRole::unknown).verdict, Verdict::forward);
  }
  EXPECT_EQ(drops(port.nat, NfDrop::not_to_pool), 3u);
  EXPECT_EQ(replay.nat.counters().passed, 3u);
  EXPECT_EQ(port.nat.sessions().size(), 1u);
}

// Through the outside port to the pool, the mappings and the filter decide as on a replay.
TEST(Nat44Boundary, ToThePoolFromOutsideOnlyAMappingThatAdmitsThePacketLetsItIn) {
  MappedNat endpoint_independent;
  const FlowKeyV4 unmapped = FlowKeyV4::from_host(kRemote, kPublic, 443, kMappedPort + 1, ipproto::kTcp);
  EXPECT_EQ(through(endpoint_independent.nat, FrameSpec::tcp4(unmapped, tcpflag::kSyn), 0, kRoom, PortRole::outside).verdict, Verdict::drop);
  EXPECT_EQ(drops(endpoint_independent.nat, NfDrop::no_mapping), 1u);

  Nat filtering(config(NatFiltering::address_dependent), 0, 1);
  const Out opened = tcp(filtering, out_key(kMappedPort, 1, kRemote, 443), tcpflag::kSyn);
  const FlowKeyV4 stranger = FlowKeyV4::from_host(0x01020304, kPublic, 443, kMappedPort, ipproto::kTcp);
  EXPECT_EQ(through(filtering, FrameSpec::tcp4(stranger, tcpflag::kSyn), 0, kRoom, PortRole::outside).verdict, Verdict::drop);
  EXPECT_EQ(drops(filtering, NfDrop::filtered), 1u);
  // The remote it sent to answers: in, through the outside port.
  const Out answer = through(filtering, FrameSpec::tcp4(opened.key.reversed(), tcpflag::kSyn | tcpflag::kAck), 0, kRoom, PortRole::outside);
  EXPECT_EQ(answer.verdict, Verdict::forward);
  EXPECT_EQ(answer.key.dst_addr, to_network32(kInside + 1));
}

}  // namespace
}  // namespace flowtrack
