// The connection tracker: both directions resolve to one connection, the TCP state machine and its
// Linux-conntrack timeouts step by step, UDP and ICMP timeouts, expiry with a fake clock, refused
// creations leave the table as it was, and a whole campus trace leaves nothing behind once idle.
#include <gtest/gtest.h>

#include "flowtrack/conntrack/conn_tracker.hpp"
#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "flowtrack/table/chained.hpp"

namespace flowtrack {
namespace {

using Tracker = ConnTracker<CuckooTable<FlowKeyV4>>;
constexpr Nanos kSecond = kNanosPerSecond;

FlowKeyV4 client_to_server(std::uint8_t protocol = ipproto::kTcp) {
  return FlowKeyV4::from_host(0x0a000001, 0xc6120001, 40000, 443, protocol);
}

ParsedPacket tcp_packet(std::uint8_t flags) {
  ParsedPacket p;
  p.ip_version = 4;
  p.l4_offset = 34;
  p.tcp_flags = flags;
  return p;
}

struct TrackerRig {
  Tracker tracker{64, ConntrackTimeouts{}, {.tick = kNanosPerMilli, .levels = 4, .start = 0}};
  FlowKeyV4 original = client_to_server();
  ConnId conn = kNoConn;

  void open(Nanos now = 0) {
    const CreateResult r = tracker.create(original, flow_hash(original), original.reversed(),
                                          flow_hash(original.reversed()), ipproto::kTcp, now);
    ASSERT_EQ(r.status, CreateStatus::created);
    conn = r.match.conn;
  }
  // A packet with `flags` in direction d at `now`; returns the state it leaves.
  TcpState packet(Direction d, std::uint8_t flags, Nanos now = 0) {
    const FlowKeyV4 key = d == Direction::original ? original : original.reversed();
    const ConnMatch m = tracker.find(key, flow_hash(key));
    EXPECT_EQ(m.conn, conn);
    EXPECT_EQ(m.direction, d);
    tracker.update(m, tcp_packet(flags), 60, now);
    return tracker.connection(conn).tcp.state;
  }
  Nanos timeout_left(Nanos now) const { return tracker.deadline(conn) - now; }
};

TEST(ConnTracker, BothDirectionsFindOneConnection) {
  TrackerRig rig;
  rig.open();
  const ConnMatch forward = rig.tracker.find(rig.original, flow_hash(rig.original));
  const ConnMatch back = rig.tracker.find(rig.original.reversed(), flow_hash(rig.original.reversed()));
  EXPECT_EQ(forward.conn, rig.conn);
  EXPECT_EQ(forward.direction, Direction::original);
  EXPECT_EQ(back.conn, rig.conn);
  EXPECT_EQ(back.direction, Direction::reply);
  EXPECT_EQ(rig.tracker.size(), 1u);
  EXPECT_EQ(rig.tracker.table().size(), 2u);
}

TEST(ConnTracker, TcpLifecycleFollowsTheHandshakeAndTheCloseWithLinuxTimeouts) {
  using namespace tcpflag;
  TrackerRig rig;
  rig.open();
  const ConntrackTimeouts t;
  EXPECT_EQ(rig.packet(Direction::original, kSyn), TcpState::syn_sent);
  EXPECT_EQ(rig.timeout_left(0), t.tcp_timeout(TcpState::syn_sent));
  EXPECT_EQ(rig.packet(Direction::reply, kSyn | kAck), TcpState::syn_recv);
  EXPECT_EQ(rig.timeout_left(0), 60 * kSecond);
  EXPECT_EQ(rig.packet(Direction::original, kAck), TcpState::established);
  EXPECT_EQ(rig.timeout_left(0), 432'000 * kSecond);
  EXPECT_EQ(rig.packet(Direction::reply, kAck | kPsh), TcpState::established);
  EXPECT_EQ(rig.packet(Direction::original, kFin | kAck), TcpState::fin_wait);
  EXPECT_EQ(rig.timeout_left(0), 120 * kSecond);
  EXPECT_EQ(rig.packet(Direction::reply, kAck), TcpState::close_wait);
  EXPECT_EQ(rig.timeout_left(0), 60 * kSecond);
  EXPECT_EQ(rig.packet(Direction::reply, kFin | kAck), TcpState::last_ack);
  EXPECT_EQ(rig.timeout_left(0), 30 * kSecond);
  EXPECT_EQ(rig.packet(Direction::original, kAck), TcpState::time_wait);
  EXPECT_EQ(rig.timeout_left(0), 120 * kSecond);
  // A new SYN on the finished tuple reopens it.
  EXPECT_EQ(rig.packet(Direction::original, kSyn), TcpState::syn_sent);
}

TEST(ConnTracker, CloseFromTheServerSideAndFromBothAtOnce) {
  using namespace tcpflag;
  for (const bool both : {false, true}) {
    TrackerRig rig;
    rig.open();
    rig.packet(Direction::original, kSyn);
    rig.packet(Direction::reply, kSyn | kAck);
    rig.packet(Direction::original, kAck);
    EXPECT_EQ(rig.packet(Direction::reply, kFin | kAck), TcpState::fin_wait);
    if (both) {
      EXPECT_EQ(rig.packet(Direction::original, kFin | kAck), TcpState::last_ack);  // the FINs crossed
    } else {
      EXPECT_EQ(rig.packet(Direction::original, kAck), TcpState::close_wait);
      EXPECT_EQ(rig.packet(Direction::original, kFin | kAck), TcpState::last_ack);
    }
    EXPECT_EQ(rig.packet(Direction::reply, kAck), TcpState::time_wait);
  }
}

TEST(ConnTracker, SimultaneousOpenAndMidStreamPickup) {
  using namespace tcpflag;
  TrackerRig rig;
  rig.open();
  rig.packet(Direction::original, kSyn);
  EXPECT_EQ(rig.packet(Direction::reply, kSyn), TcpState::syn_recv);
  EXPECT_EQ(rig.packet(Direction::reply, kSyn | kAck), TcpState::syn_recv);
  EXPECT_EQ(rig.packet(Direction::original, kAck), TcpState::established);

  TrackerRig mid;
  mid.open();
  EXPECT_EQ(mid.packet(Direction::original, kAck | kPsh), TcpState::established);
}

TEST(ConnTracker, RstClosesAndTheConnectionExpiresTenSecondsLater) {
  using namespace tcpflag;
  TrackerRig rig;
  rig.open();
  rig.packet(Direction::original, kSyn);
  rig.packet(Direction::reply, kSyn | kAck);
  rig.packet(Direction::original, kAck);
  EXPECT_EQ(rig.packet(Direction::reply, kRst, kSecond), TcpState::close);
  std::vector<ConnId> expired;
  auto on_expire = [&](ConnId c, const Tracker::Connection&) { expired.push_back(c); };
  rig.tracker.expire(kSecond + 10 * kSecond - kNanosPerMilli, ~std::size_t{0}, on_expire);
  EXPECT_TRUE(expired.empty());
  rig.tracker.expire(kSecond + 10 * kSecond + kNanosPerMilli, ~std::size_t{0}, on_expire);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0], rig.conn);
  EXPECT_EQ(rig.tracker.size(), 0u);
  EXPECT_EQ(rig.tracker.table().size(), 0u);
  EXPECT_FALSE(rig.tracker.find(rig.original, flow_hash(rig.original)));
}

TEST(ConnTracker, UdpIsShortUntilAReplyAndIcmpHasItsOwnTimeout) {
  Tracker tracker(8, ConntrackTimeouts{}, {.tick = kNanosPerMilli, .levels = 4, .start = 0});
  const FlowKeyV4 udp = client_to_server(ipproto::kUdp);
  const CreateResult r = tracker.create(udp, flow_hash(udp), udp.reversed(), flow_hash(udp.reversed()), ipproto::kUdp, 0);
  ParsedPacket p;
  p.ip_version = 4;
  tracker.update(r.match, p, 80, 0);
  EXPECT_EQ(tracker.deadline(r.match.conn), 30 * kSecond);
  tracker.update({r.match.conn, Direction::reply}, p, 80, 5 * kSecond);
  EXPECT_EQ(tracker.deadline(r.match.conn), 125 * kSecond);
  EXPECT_TRUE(tracker.connection(r.match.conn).replied);

  const FlowKeyV4 icmp = client_to_server(ipproto::kIcmp);
  const CreateResult e = tracker.create(icmp, flow_hash(icmp), icmp.reversed(), flow_hash(icmp.reversed()), ipproto::kIcmp, 0);
  EXPECT_EQ(tracker.deadline(e.match.conn), 30 * kSecond);
}

TEST(ConnTracker, RefusedCreationsLeaveTheTableAsItWas) {
  Tracker tracker(4, ConntrackTimeouts{}, {.tick = kNanosPerMilli, .levels = 4, .start = 0});
  const FlowKeyV4 a = client_to_server();
  ASSERT_EQ(tracker.create(a, flow_hash(a), a.reversed(), flow_hash(a.reversed()), ipproto::kTcp, 0).status,
            CreateStatus::created);
  // Again: the existing connection.
  EXPECT_EQ(tracker.create(a, flow_hash(a), a.reversed(), flow_hash(a.reversed()), ipproto::kTcp, 0).status,
            CreateStatus::exists);
  // A new tuple whose reply is a's original tuple: taken.
  const FlowKeyV4 b = FlowKeyV4::from_host(0x0a000002, 0xc6120001, 40000, 443, ipproto::kTcp);
  EXPECT_EQ(tracker.create(b, flow_hash(b), a, flow_hash(a), ipproto::kTcp, 0).status, CreateStatus::reply_taken);
  EXPECT_EQ(tracker.size(), 1u);
  EXPECT_EQ(tracker.table().size(), 2u);
  EXPECT_FALSE(tracker.find(b, flow_hash(b)));
  // Fill to max_connections: the next one is refused as full, nothing else changes.
  for (std::uint32_t i = 1; i < 4; ++i) {
    const FlowKeyV4 k = FlowKeyV4::from_host(0x0a000100 + i, 0xc6120001, 40000, 443, ipproto::kTcp);
    ASSERT_EQ(tracker.create(k, flow_hash(k), k.reversed(), flow_hash(k.reversed()), ipproto::kTcp, 0).status,
              CreateStatus::created);
  }
  EXPECT_EQ(tracker.create(b, flow_hash(b), b.reversed(), flow_hash(b.reversed()), ipproto::kTcp, 0).status,
            CreateStatus::full);
  EXPECT_EQ(tracker.size(), 4u);
  EXPECT_EQ(tracker.table().size(), 8u);
}

TEST(ConnTracker, DestroyIsIdempotentAndFreesBothTuples) {
  TrackerRig rig;
  rig.open();
  rig.tracker.destroy(rig.conn);
  rig.tracker.destroy(rig.conn);
  EXPECT_EQ(rig.tracker.size(), 0u);
  EXPECT_EQ(rig.tracker.table().size(), 0u);
}

// A whole campus trace: the first packet of each connection creates it, every later packet of either
// direction finds it, and once every timeout has passed nothing is left. Over a table of its own ids
// (chained: the tracker links entries to connections) and a table of the tracker's ids (cuckoo).
template <class Table>
class ConnTrackerOver : public ::testing::Test {};
using TrackedTables = ::testing::Types<ChainedTable<FlowKeyV4>, CuckooTable<FlowKeyV4>>;
TYPED_TEST_SUITE(ConnTrackerOver, TrackedTables);

TYPED_TEST(ConnTrackerOver, CampusTraceResolvesEveryPacketAndLeavesNothingBehind) {
  static_assert(ConnTracker<TypeParam>::kNamedEntries == NamedIdTable<TypeParam>);
  CampusProfile profile;
  profile.flows = 3'000;
  const PacketStore trace = generate_campus(profile);
  ConnTracker<TypeParam> tracker(4'000, ConntrackTimeouts{}, {.tick = kNanosPerMilli, .levels = 4, .start = 0});
  std::size_t created = 0, expired = 0;
  Nanos now = 0;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    ParsedPacket p;
    ASSERT_EQ(parse_frame(trace[i].bytes, trace.link_type(), p), ParseStatus::ok);
    now = trace[i].timestamp_ns;
    ConnMatch m = tracker.find(p.key4, flow_hash(p.key4));
    if (!m) {
      const CreateResult r = tracker.create(p.key4, flow_hash(p.key4), p.key4.reversed(), flow_hash(p.key4.reversed()),
                                            p.key4.protocol, now);
      ASSERT_EQ(r.status, CreateStatus::created);
      m = r.match;
      ++created;
    }
    tracker.update(m, p, trace[i].wire_length, now);
    tracker.expire(now, ~std::size_t{0}, [&](ConnId, const auto&) { ++expired; });
  }
  EXPECT_EQ(created, profile.flows);  // each connection created once, its replies found it
  tracker.expire(now + 432'001 * kSecond, ~std::size_t{0}, [&](ConnId, const auto&) { ++expired; });
  EXPECT_EQ(expired, created);
  EXPECT_EQ(tracker.size(), 0u);
  EXPECT_EQ(tracker.table().size(), 0u);
}

}  // namespace
}  // namespace flowtrack
