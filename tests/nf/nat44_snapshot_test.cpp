// A NAT's state carried over to a fresh instance (snapshot, restore): connections keep their external
// endpoints both ways, their timers keep the time they had left, quarantined ports and blocks stay out
// of reach until their time, and a snapshot that does not fit the instance is refused by name.
#include <gtest/gtest.h>

#include "nat_frames.hpp"

namespace flowtrack {
namespace {

using namespace nat_frames;
using namespace tcpflag;

constexpr Nanos kSec = kNanosPerSecond;

// Traffic of every kind: established TCP, UDP, ICMP echo, a hairpin, a closed connection whose port
// waits in quarantine.
void busy(Nat& nat, Nanos t) {
  const FlowKeyV4 web = out_key(40000, 1);
  const Out syn = tcp(nat, web, kSyn, t);
  tcp(nat, syn.key.reversed(), kSyn | kAck, t);
  tcp(nat, web, kAck, t);
  for (std::uint32_t host = 2; host <= 30; ++host) {
    through(nat, FrameSpec::udp4(FlowKeyV4::from_host(kInside + host, kRemote, 5000 + host, 53, ipproto::kUdp), 8), t);
  }
  FrameSpec echo;
  echo.key4 = FlowKeyV4::from_host(kInside + 40, kRemote, 77, 77, ipproto::kIcmp);
  echo.icmp_type = 8;
  through(nat, echo, t);
  // Host 41 reaches host 2's external endpoint: a hairpin.
  const NatMapping* two = nat.mapping_of(to_network32(kInside + 2), to_network16(5002), ipproto::kUdp);
  through(nat, FrameSpec::udp4(FlowKeyV4{.src_addr = to_network32(kInside + 41), .dst_addr = two->external_addr,
                                         .src_port = to_network16(6000), .dst_port = two->external_port, .protocol = ipproto::kUdp}, 8), t);
  // A connection closed by a RST: its mapping ends four minutes later and its port waits in quarantine.
  const FlowKeyV4 gone = out_key(41000, 50);
  tcp(nat, gone, kSyn, t);
  tcp(nat, gone, kRst, t);
}

TEST(Nat44Snapshot, ARestoredInstanceHoldsTheSameState) {
  for (const std::uint16_t block_size : {0, 64}) {
    for (const NatFiltering filtering : {NatFiltering::endpoint_independent, NatFiltering::address_dependent}) {
      NatConfig c = config(filtering, 3);
      c.block_size = block_size;
      Nat before(c, 0, 1);
      busy(before, 10 * kSec);
      before.expire(10 * kSec + nat_timeouts().tcp_timeout(TcpState::close) + kSec);  // the RST's mapping ends
      const Nanos saved_at = 300 * kSec;
      const NatSnapshot saved = before.snapshot(saved_at);
      EXPECT_FALSE(saved.quarantined_ports.empty());
      EXPECT_EQ(saved.blocks.empty(), block_size == 0);
      Nat after(c, 0, 1, 5 * kSec);
      after.restore(saved, 7 * kSec);
      EXPECT_EQ(after.snapshot(7 * kSec), saved) << "block size " << block_size;
      EXPECT_EQ(after.mapping_count(), before.mapping_count());
      EXPECT_EQ(after.blocks_held(), before.blocks_held());
    }
  }
}

TEST(Nat44Snapshot, ConnectionsGoOnThroughTheSameExternalEndpointsBothWays) {
  NatConfig c = config(NatFiltering::address_dependent);
  c.block_size = 128;
  Nat before(c, 0, 1);
  const FlowKeyV4 key = out_key(40000, 9);
  const FlowKeyV4 outside = tcp(before, key, kSyn, kSec).key.reversed();  // what the remote answers to
  tcp(before, outside, kSyn | kAck, kSec);
  Nat after(c, 0, 1);
  after.restore(before.snapshot(2 * kSec), 0);
  const Out out = tcp(after, key, kAck, kSec);
  EXPECT_EQ(out.verdict, Verdict::forward);
  EXPECT_EQ(out.key, outside.reversed()) << "the same external endpoint";
  const Out in = tcp(after, outside, kAck, kSec);
  EXPECT_EQ(in.verdict, Verdict::forward);
  EXPECT_EQ(in.key, key.reversed());
  const ConnMatch m = after.sessions().find(key, flow_hash(key));
  ASSERT_TRUE(m);
  EXPECT_EQ(after.sessions().connection(m.conn).tcp.state, TcpState::established);
  // The address-dependent filter still knows the remote the host talked to, and only that one.
  FlowKeyV4 same_remote = outside;
  same_remote.src_port = to_network16(9);
  EXPECT_EQ(tcp(after, same_remote, kSyn, kSec).verdict, Verdict::forward);
  FlowKeyV4 stranger = same_remote;
  stranger.src_addr = to_network32(0x01020304);
  EXPECT_EQ(tcp(after, stranger, kSyn, kSec).verdict, Verdict::drop);
}

TEST(Nat44Snapshot, TimersKeepTheTimeTheyHadLeft) {
  Nat before(config(), 0, 1);
  const FlowKeyV4 key = FlowKeyV4::from_host(kInside + 3, kRemote, 7000, 53, ipproto::kUdp);
  through(before, FrameSpec::udp4(key, 8), 0);
  const NatSnapshot saved = before.snapshot(100 * kSec);  // 20 s left of the 120 s unreplied timeout
  ASSERT_EQ(saved.sessions.size(), 1u);
  EXPECT_EQ(saved.sessions[0].connection.remaining, 20 * kSec);
  Nat after(config(), 0, 1, 1000 * kSec);
  after.restore(saved, 1000 * kSec);
  after.expire(1019 * kSec);
  EXPECT_EQ(after.mapping_count(), 1u);
  after.expire(1020 * kSec + 200 * kNanosPerMilli);
  EXPECT_EQ(after.mapping_count(), 0u);
}

TEST(Nat44Snapshot, QuarantinedPortsStayOutOfReachUntilTheirTime) {
  NatConfig c = config();
  c.port_first = 2000;
  c.port_last = 2001;  // two ports
  Nat before(c, 0, 1);
  const FlowKeyV4 first = FlowKeyV4::from_host(kInside + 1, kRemote, 2000, 53, ipproto::kUdp);
  through(before, FrameSpec::udp4(first, 8), 0);
  before.expire(nat_timeouts().udp_unreplied + kSec);  // 2000 into quarantine at about 120 s
  through(before, FrameSpec::udp4(FlowKeyV4::from_host(kInside + 2, kRemote, 2001, 53, ipproto::kUdp), 8), 121 * kSec);
  Nat after(c, 0, 1);
  after.restore(before.snapshot(122 * kSec), 0);
  const FlowKeyV4 third = FlowKeyV4::from_host(kInside + 3, kRemote, 2000, 53, ipproto::kUdp);
  EXPECT_EQ(through(after, FrameSpec::udp4(third, 8), 100 * kSec).verdict, Verdict::drop) << "2000 is still in quarantine";
  EXPECT_EQ(drops(after, NfDrop::no_port), 1u);
  EXPECT_EQ(through(after, FrameSpec::udp4(third, 8), 120 * kSec).verdict, Verdict::forward);
}

TEST(Nat44Snapshot, ASnapshotThatDoesNotFitIsRefusedByName) {
  Nat source(config(), 0, 1);
  busy(source, 0);
  const NatSnapshot good = source.snapshot(kSec);
  const auto refused = [&](NatSnapshot s, const NatConfig& into, const std::string& reason) {
    Nat nat(into, 0, 1);
    try {
      nat.restore(s, 0);
      ADD_FAILURE() << "restored: " << reason;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  };
  NatSnapshot s = good;
  s.mappings[0].external_addr = to_network32(0x01010101);
  refused(s, config(), "not in the pool");
  s = good;
  s.mappings.push_back(s.mappings[0]);
  refused(s, config(), "twice");
  s = good;
  s.sessions[0].mapping = 999;
  refused(s, config(), "names no mapping");
  s = good;
  s.sessions.push_back(s.sessions[0]);
  refused(s, config(), "tuple twice");
  s = good;
  s.sessions.erase(s.sessions.begin());
  refused(s, config(), "without sessions");
  NatConfig narrow = config();
  narrow.port_first = 60000;
  refused(good, narrow, "not free in this worker's slice");
  NatConfig blocks = config();
  blocks.block_size = 64;
  refused(good, blocks, "not free in this worker's slice and the subscriber's blocks");
  Nat used(config(), 0, 1);
  busy(used, 0);
  try {
    used.restore(good, 0);
    ADD_FAILURE() << "restored into a busy instance";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("not fresh"), std::string::npos);
  }
}

}  // namespace
}  // namespace flowtrack
