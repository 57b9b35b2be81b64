// The two ends of a NAT pair's sync link over an in-memory link whose losses the test chooses, on the
// test's clock: the standby ends up holding its active's state whatever was lost, and a NAT restored
// from that copy (a takeover) answers the active's connections through the same public endpoints. A
// replayed, forged or stale datagram is refused and changes nothing; a restart of either end brings a
// whole resynchronisation; a silent active is taken for gone; a standby gone too long costs a resync.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "flowtrack/nf/nat_event_ring.hpp"
#include "flowtrack/nf/nat_replica.hpp"
#include "flowtrack/nf/nat_sync_peer.hpp"
#include "flowtrack/nf/nat_sync_records.hpp"
#include "nat_frames.hpp"

namespace flowtrack {
namespace {

using namespace nat_frames;

constexpr Nanos kSyncMs = kNanosPerMilli;
constexpr Nanos kPairQuarantine = 2 * kNanosPerSecond;

// The active NAT, its events into a ring (nat_event_ring.hpp) as a pair's active's worker leaves them.
using ActiveNat = Nat44<CuckooTable<FlowKeyV4>, TimerWheel, NatEventRing>;

NatConfig pair_config(std::uint16_t block_size) {
  NatConfig c = config(NatFiltering::address_dependent);
  c.block_size = block_size;
  c.port_quarantine = kPairQuarantine;
  return c;
}

// Both ends of the link and the wire between them. `lose` (when set) says which datagrams the wire
// drops; every datagram is checked against the bound of one frame on its way.
struct SyncWire {
  SyncKey key{std::vector<std::uint8_t>(32, 0x5a)};
  NatReplica replica{1, kPairQuarantine};
  NatSyncActive active{key, 1000};
  NatSyncStandby standby{key, 2000, replica};
  std::function<bool(const std::vector<std::uint8_t>&)> lose;
  std::function<void()> whole_state;  // queues the active's whole state after a resync_begin

  void deliver(Datagrams& to_standby, Datagrams& to_active, Nanos now) {
    while (!to_standby.empty() || !to_active.empty()) {
      Datagrams standby_in = std::move(to_standby), active_in = std::move(to_active);
      to_standby.clear();
      to_active.clear();
      for (const auto& d : standby_in) {
        EXPECT_LE(d.size(), kSyncMaxDatagram);
        if (!lose || !lose(d)) standby.receive(d, now, to_active);
      }
      for (const auto& d : active_in) {
        EXPECT_LE(d.size(), kSyncMaxDatagram);
        if (!lose || !lose(d)) active.receive(d, now);
      }
    }
  }

  // Both ends at `now`: the active's owner answers a resync request, both poll, the wire delivers.
  void step(Nanos now) {
    Datagrams to_standby, to_active;
    standby.poll(now, to_active);
    deliver(to_standby, to_active, now);
    if (active.take_resync_request()) {
      active.begin_resync(1);
      if (whole_state) whole_state();
      active.queue(SyncResyncEnd{});
    }
    active.poll(now, to_standby);
    deliver(to_standby, to_active, now);
  }
  void run(Nanos from, Nanos until, Nanos every = 10 * kSyncMs) {
    for (Nanos t = from; t <= until; t += every) step(t);
  }
};

// The active NAT with its events and blocks put on the link as a pair's active does.
struct ActiveSide {
  ActiveSide(SyncWire& wire, std::uint16_t block_size) : wire(wire), nat(pair_config(block_size), 0, 1), events(4096), log(4096) {
    nat.events().attach(&events);
    if (block_size != 0) {
      EXPECT_TRUE(nat.attach_block_log(&log));
    }
    wire.whole_state = [this] {
      std::vector<SyncRecord> records;
      append_state_records(nat.snapshot(last), 0, records);
      for (const SyncRecord& r : records) this->wire.active.queue(r);
    };
  }
  // Moves what the NAT told since the last call onto the link: the blocks first (a session's port
  // lies in a block given before it), then the sessions' events.
  void forward() {
    for (const PortBlockRecord& b : log.take_all()) wire.active.queue(sync_record_of(b, 0));
    std::vector<NatEvent> taken(events.capacity());
    taken.resize(events.pop(taken));
    for (const NatEvent& e : taken) wire.active.queue(sync_record_of(e, 0));
    EXPECT_EQ(nat.events().lost(), 0u);
  }
  Out send(const FrameSpec& spec, Nanos now) {
    last = now;
    const Out out = through(nat, spec, now);
    forward();
    return out;
  }

  SyncWire& wire;
  ActiveNat nat;
  SpscRingOf<NatEvent> events;
  PortBlockLog log;
  Nanos last = 0;
};

FrameSpec udp_from(std::uint32_t host, std::uint16_t port) {
  return FrameSpec::udp4(FlowKeyV4::from_host(kInside + host, kRemote, port, 53, ipproto::kUdp), 8);
}

// A NAT taking over from the standby's copy at `now`.
std::unique_ptr<Nat> taken_over(const SyncWire& wire, std::uint16_t block_size, Nanos now) {
  auto nat = std::make_unique<Nat>(pair_config(block_size), 0, 1, now);
  EXPECT_EQ(nat->restore(wire.replica.snapshot(0, now), now, RestoreMode::what_fits), 0u) << "every record fits";
  return nat;
}

// A snapshot's content in an order of its own: its sessions by original tuple (each with the mappings it
// names), its blocks and quarantines sorted.
struct SnapshotContent {
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint16_t, std::uint16_t, std::uint8_t>,
           std::tuple<SavedConnection<FlowKeyV4>, NatSnapshot::Mapping, NatSnapshot::Mapping>>
      sessions;
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint16_t>> blocks;
  std::set<std::tuple<std::uint32_t, std::uint16_t, std::uint8_t, Nanos>> quarantined_ports;
  std::set<std::tuple<std::uint32_t, std::uint16_t, Nanos>> quarantined_blocks;
  bool operator==(const SnapshotContent&) const = default;
};

SnapshotContent content_of(const NatSnapshot& s) {
  SnapshotContent c;
  const auto mapping = [&](std::uint32_t i) { return i < s.mappings.size() ? s.mappings[i] : NatSnapshot::Mapping{}; };
  for (const NatSnapshot::Session& session : s.sessions) {
    const FlowKeyV4& k = session.connection.original;
    c.sessions[{k.src_addr, k.dst_addr, k.src_port, k.dst_port, k.protocol}] = {session.connection, mapping(session.mapping),
                                                                               mapping(session.hairpin_mapping)};
  }
  for (const NatSnapshot::Block& b : s.blocks) c.blocks.insert({b.subscriber, b.public_addr, b.first_port});
  for (const auto& q : s.quarantined_ports) c.quarantined_ports.insert({q.public_addr, q.port, q.protocol, q.remaining});
  for (const auto& q : s.quarantined_blocks) c.quarantined_blocks.insert({q.public_addr, q.first_port, q.remaining});
  return c;
}

TEST(NatSyncPeer, AWorkersWholeStateReadBackFromItsRecordsIsTheSame) {
  constexpr Nanos kSecond = kNanosPerSecond;
  for (const std::uint16_t block_size : {0, 64}) {
    Nat nat(pair_config(block_size), 0, 1);
    // Host 50's session ends at about 120 s: its port (and, with blocks, its block) then waits 2 s.
    through(nat, udp_from(50, 5000), 0);
    for (std::uint32_t host = 1; host <= 10; ++host) through(nat, udp_from(host, 6000 + host), 119 * kSecond);
    const FlowKeyV4 web = out_key(40000, 20);
    const Out syn = tcp(nat, web, tcpflag::kSyn, 119 * kSecond);
    tcp(nat, syn.key.reversed(), tcpflag::kSyn | tcpflag::kAck, 119 * kSecond);
    nat.expire(121 * kSecond);
    const NatSnapshot saved = nat.snapshot(121 * kSecond + 500 * kSyncMs);
    ASSERT_FALSE(saved.quarantined_ports.empty() && saved.quarantined_blocks.empty()) << "block size " << block_size;

    std::vector<SyncRecord> records{SyncResyncBegin{1}};
    append_state_records(saved, 0, records);
    records.push_back(SyncResyncEnd{});
    NatReplica replica(1, kPairQuarantine);
    for (const SyncRecord& r : records) ASSERT_TRUE(replica.apply(r, 1000 * kSecond));
    EXPECT_EQ(content_of(replica.snapshot(0, 1000 * kSecond)), content_of(saved)) << "block size " << block_size;
  }
}

TEST(NatSyncPeer, ATakeoverAnswersTheActivesConnectionsThroughTheSamePublicEndpoints) {
  for (const std::uint16_t block_size : {0, 64}) {
    SyncWire wire;
    ActiveSide active(wire, block_size);
    // Connections before the standby is there: they reach it in the whole state.
    std::vector<Out> outs;
    for (std::uint32_t host = 1; host <= 5; ++host) outs.push_back(active.send(udp_from(host, 5000), 0));
    wire.run(0, 200 * kSyncMs);
    EXPECT_TRUE(wire.standby.synchronised());
    // And connections after: they reach it as events.
    for (std::uint32_t host = 6; host <= 12; ++host) outs.push_back(active.send(udp_from(host, 6000), 300 * kSyncMs));
    const FlowKeyV4 web = out_key(40000, 20);
    const Out syn = active.send(FrameSpec::tcp4(web, tcpflag::kSyn, 0), 300 * kSyncMs);
    active.send(FrameSpec::tcp4(syn.key.reversed(), tcpflag::kSyn | tcpflag::kAck, 0), 310 * kSyncMs);
    active.send(FrameSpec::tcp4(web, tcpflag::kAck, 0), 320 * kSyncMs);
    wire.run(300 * kSyncMs, 600 * kSyncMs);
    EXPECT_EQ(wire.active.in_flight(), 0u) << "everything acknowledged";
    const SyncCounters& sent = wire.active.counters();
    EXPECT_GT(sent.acknowledged, 0u);
    EXPECT_LE(sent.acknowledged, sent.sent - sent.retransmitted) << "each data message acknowledged once";
    EXPECT_EQ(wire.replica.sessions(), active.nat.sessions().size());

    const std::unique_ptr<Nat> taken = taken_over(wire, block_size, 700 * kSyncMs);
    Nat& standby = *taken;
    EXPECT_EQ(standby.mapping_count(), active.nat.mapping_count());
    EXPECT_EQ(standby.blocks_held(), active.nat.blocks_held());
    for (const Out& out : outs) {
      const Out answer = through(standby, FrameSpec::udp4(out.key.reversed(), 8), 800 * kSyncMs);
      EXPECT_EQ(answer.verdict, Verdict::forward) << "block size " << block_size;
    }
    const Out established = tcp(standby, web, tcpflag::kAck, 800 * kSyncMs);
    EXPECT_EQ(established.key, syn.key) << "the same public endpoint";
    EXPECT_EQ(tcp(standby, syn.key.reversed(), tcpflag::kAck, 800 * kSyncMs).key, web.reversed());
  }
}

TEST(NatSyncPeer, LostDatagramsAreSentAgainUntilTheStandbyHoldsEverything) {
  SyncWire wire;
  ActiveSide active(wire, 0);
  wire.run(0, 100 * kSyncMs);
  ASSERT_TRUE(wire.standby.synchronised());
  // Every other datagram from the active is lost for a while.
  bool drop = false;
  wire.lose = [&](const std::vector<std::uint8_t>&) { return drop = !drop; };
  for (std::uint32_t host = 1; host <= 200; ++host) active.send(udp_from(host, 5000), 200 * kSyncMs);
  wire.run(200 * kSyncMs, 400 * kSyncMs);
  wire.lose = nullptr;
  wire.run(410 * kSyncMs, 1500 * kSyncMs);
  EXPECT_GT(wire.active.counters().retransmitted, 0u);
  EXPECT_EQ(wire.active.in_flight(), 0u);
  EXPECT_EQ(wire.replica.sessions(), 200u);
  EXPECT_EQ(taken_over(wire, 0, 1600 * kSyncMs)->mapping_count(), 200u);
}

TEST(NatSyncPeer, AReplayedDatagramIsRefusedAndChangesNothing) {
  SyncWire wire;
  ActiveSide active(wire, 0);
  wire.run(0, 100 * kSyncMs);
  Datagrams seen;
  wire.lose = [&](const std::vector<std::uint8_t>& d) {
    seen.push_back(d);
    return false;
  };
  active.send(udp_from(1, 5000), 200 * kSyncMs);
  wire.run(200 * kSyncMs, 300 * kSyncMs);
  ASSERT_EQ(wire.replica.sessions(), 1u);
  // The session ends on the active; its close reaches the standby.
  active.nat.expire(400 * kNanosPerSecond);
  active.forward();
  wire.run(400 * kNanosPerSecond, 400 * kNanosPerSecond + 100 * kSyncMs);
  ASSERT_EQ(wire.replica.sessions(), 0u);
  // The datagram that opened it, sent again by an attacker on the link.
  const std::uint64_t replayed_before = wire.standby.counters().refused[static_cast<std::size_t>(SyncRefusal::replayed)];
  Datagrams answers;
  for (const auto& d : seen) wire.standby.receive(d, 401 * kNanosPerSecond, answers);
  EXPECT_GT(wire.standby.counters().refused[static_cast<std::size_t>(SyncRefusal::replayed)], replayed_before);
  EXPECT_EQ(wire.replica.sessions(), 0u) << "the replayed session was not applied";
}

TEST(NatSyncPeer, AForgedDatagramIsRefusedAndNeverApplied) {
  SyncWire wire;
  ActiveSide active(wire, 0);
  wire.run(0, 100 * kSyncMs);
  active.send(udp_from(1, 5000), 200 * kSyncMs);
  wire.run(200 * kSyncMs, 300 * kSyncMs);
  ASSERT_EQ(wire.replica.sessions(), 1u);
  // A close of that session under a greater epoch, sealed with a key that is not the pair's.
  std::vector<std::uint8_t> payload;
  encode_sync_record(SyncClosed{0, FlowKeyV4::from_host(kInside + 1, kRemote, 5000, 53, ipproto::kUdp)}, payload);
  const SyncKey wrong(std::vector<std::uint8_t>(32, 0x5b));
  Datagrams answers;
  wire.standby.receive(seal_sync_message({SyncType::data, 5000, 1, 1, 0}, payload, wrong), 310 * kSyncMs, answers);
  EXPECT_EQ(wire.standby.counters().refused[static_cast<std::size_t>(SyncRefusal::forged)], 1u);
  EXPECT_TRUE(answers.empty()) << "no answer to a forgery";
  EXPECT_EQ(wire.replica.sessions(), 1u);
  EXPECT_TRUE(wire.standby.synchronised()) << "a forged epoch does not restart the stream";
}

TEST(NatSyncPeer, ARestartedStandbyGetsTheWholeStateAgain) {
  SyncWire wire;
  ActiveSide active(wire, 0);
  for (std::uint32_t host = 1; host <= 3; ++host) active.send(udp_from(host, 5000), 0);
  wire.run(0, 100 * kSyncMs);
  ASSERT_EQ(wire.replica.sessions(), 3u);
  const std::uint64_t resyncs = wire.active.counters().resyncs;
  // A new standby process: an empty copy and a later epoch.
  NatReplica fresh(1, kPairQuarantine);
  NatSyncStandby restarted(wire.key, 3000, fresh);
  Datagrams to_active, to_standby;
  restarted.poll(200 * kSyncMs, to_active);
  ASSERT_EQ(to_active.size(), 1u) << "a hello";
  wire.active.receive(to_active[0], 200 * kSyncMs);
  EXPECT_TRUE(wire.active.take_resync_request());
  wire.active.begin_resync(1);
  wire.whole_state();
  wire.active.queue(SyncResyncEnd{});
  for (const Nanos t : {300 * kSyncMs, 400 * kSyncMs}) {  // the records wait out the batching delay
    to_standby.clear();
    wire.active.poll(t, to_standby);
    for (const auto& d : to_standby) restarted.receive(d, t, to_active);
  }
  EXPECT_TRUE(restarted.synchronised());
  EXPECT_EQ(fresh.sessions(), 3u);
  EXPECT_EQ(wire.active.counters().resyncs, resyncs + 1);
}

TEST(NatSyncPeer, ARestartedActiveIsHeardAndItsStandbyAsksForEverything) {
  SyncWire wire;
  ActiveSide active(wire, 0);
  active.send(udp_from(1, 5000), 0);
  wire.run(0, 100 * kSyncMs);
  ASSERT_TRUE(wire.standby.synchronised());
  // A new active process (a later epoch) with nothing to say yet: its heartbeat.
  NatSyncActive restarted(wire.key, 1001);
  Datagrams to_standby, to_active;
  restarted.poll(200 * kSyncMs, to_standby);
  ASSERT_EQ(to_standby.size(), 1u);
  wire.standby.receive(to_standby[0], 200 * kSyncMs, to_active);
  EXPECT_FALSE(wire.standby.synchronised());
  ASSERT_EQ(to_active.size(), 1u) << "a hello";
  restarted.receive(to_active[0], 200 * kSyncMs);
  EXPECT_TRUE(restarted.take_resync_request());
  // The old active's datagrams are now stale.
  Datagrams old;
  wire.active.poll(10 * kNanosPerSecond, old);
  ASSERT_FALSE(old.empty());
  const std::uint64_t replayed = wire.standby.counters().refused[static_cast<std::size_t>(SyncRefusal::replayed)];
  to_active.clear();
  for (const auto& d : old) wire.standby.receive(d, 10 * kNanosPerSecond, to_active);
  EXPECT_EQ(wire.standby.counters().refused[static_cast<std::size_t>(SyncRefusal::replayed)], replayed + old.size());
}

TEST(NatSyncPeer, TheStandbyTakesASilentActiveForGone) {
  SyncWire wire;
  wire.run(0, 1000 * kSyncMs);
  // Heartbeats while idle: the active was heard within a heartbeat of the last step.
  const SyncTimers timers;
  EXPECT_TRUE(wire.standby.active_alive(1000 * kSyncMs - timers.heartbeat + timers.dead_after));
  EXPECT_FALSE(wire.standby.active_alive(1000 * kSyncMs + timers.dead_after + 1));
  NatReplica replica(1, kPairQuarantine);
  const NatSyncStandby never(wire.key, 9, replica);
  EXPECT_FALSE(never.active_alive(0)) << "an active never heard is not alive";
}

TEST(NatSyncPeer, ABacklogBeyondItsBoundIsDroppedForAResync) {
  const SyncKey key(std::vector<std::uint8_t>(32, 1));
  NatSyncActive active(key, 1, {}, 100);
  for (int i = 0; i < 100; ++i) active.queue(SyncResyncEnd{});
  EXPECT_FALSE(active.take_resync_request());
  EXPECT_EQ(active.queued(), 100u);
  active.queue(SyncResyncEnd{});
  EXPECT_EQ(active.queued(), 0u);
  EXPECT_TRUE(active.take_resync_request());
}

}  // namespace
}  // namespace flowtrack
