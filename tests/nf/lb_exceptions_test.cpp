// Connections off today's choice, shared between balancer instances behind ECMP (lb_exceptions.hpp,
// lb_peer_link.hpp). Which connections an instance marks is checked against another instance that
// never saw them open (the one the router would move them to): after a drain, a weight change, a
// backend down or removed, the marked connections are exactly those the other instance would send
// elsewhere, and a change undone, or a connection's end, unmarks them. An instance holding a peer's
// exceptions sends such a connection's next packet to its backend, where without them it would not;
// and the exceptions cross the sync link whatever it loses, refusing what is forged or replayed.
#include <gtest/gtest.h>

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "flowtrack/nf/lb_exceptions.hpp"
#include "flowtrack/nf/lb_peer_link.hpp"
#include "nf/lb_rig.hpp"

namespace flowtrack {
namespace lb_exceptions_test {

using namespace lb_rig;
using namespace tcpflag;

using Tuples = std::unordered_set<FlowKeyV4, FlowKeyHasher>;

constexpr std::uint16_t kConnections = 600;
constexpr Nanos kMs = kNanosPerMilli;
constexpr Nanos kPastEveryTimeout = 100 * 24 * 3600 * kNanosPerSecond;

// Ends every connection of `lb`.
void expire_all(Lb& lb) {
  while (lb.expire(kPastEveryTimeout) != 0) {
  }
}

StatefulLbConfig keyed_config() {
  StatefulLbConfig c = lb_config(LbPolicy::maglev, 4096);
  const std::string_view secret = "the deployment's shared secret";
  c.deployment_key = DeploymentKey(std::span(reinterpret_cast<const std::uint8_t*>(secret.data()), secret.size()));
  return c;
}

struct RecordingSink final : LbExceptionSink {
  void emit(const LbExceptionEvent& event) override { events.push_back(event); }
  std::vector<LbExceptionEvent> events;
};

std::string backend_at(std::uint32_t address) {
  for (const BackendConfig& b : web_service().backends) {
    if (b.address == address) return b.name;
  }
  return "none";
}

// Where a connection's next packet goes from an instance that never saw it (ACK, no state).
std::string where_a_stranger_sends(Lb& lb, const FlowKeyV4& key) { return backend_at(run(lb, key, kAck).key.dst_addr); }

// An instance with `kConnections` open connections (SYN, then ACK), their backends by tuple.
struct Instance {
  Instance() : lb(keyed_config()) {
    lb.share_exceptions(&sink, nullptr);
    for (std::uint16_t n = 0; n < kConnections; ++n) {
      const FlowKeyV4 key = client_key(static_cast<std::uint16_t>(20000 + n));
      backends[key] = backend_at(run(lb, key, kSyn).key.dst_addr);
      run(lb, key, kAck);
    }
  }
  Tuples marked() const {
    Tuples tuples;
    for (const LbExceptionEvent& e : lb.exception_events()) tuples.insert(e.original);
    return tuples;
  }
  Lb lb;
  RecordingSink sink;
  std::unordered_map<FlowKeyV4, std::string, FlowKeyHasher> backends;
};

// The tuples a fresh instance with the pool after `changes` sends to another backend than `in` did.
Tuples sent_elsewhere_by_a_stranger(const Instance& in, const std::vector<PoolChange>& changes) {
  Lb stranger(keyed_config());
  for (const PoolChange& c : changes) stranger.apply(c);
  Tuples moved;
  for (const auto& [key, backend] : in.backends) {
    if (where_a_stranger_sends(stranger, key) != backend) moved.insert(key);
  }
  return moved;
}

TEST(LbExceptions, AStablePoolHasNone) {
  Instance in;
  EXPECT_EQ(in.lb.exceptions(), 0U);
  EXPECT_TRUE(in.sink.events.empty());
  EXPECT_TRUE(sent_elsewhere_by_a_stranger(in, {}).empty()) << "the oracle agrees with an instance of the same pool";
}

TEST(LbExceptions, EachPoolChangeMarksExactlyTheConnectionsAnotherInstanceWouldMove) {
  const std::vector<std::pair<std::string, std::vector<PoolChange>>> histories = {
      {"drain", {web_change(PoolAction::drain, "web-1")}},
      {"weight", {web_change(PoolAction::weight, "web-2", 3)}},
      {"down", {web_change(PoolAction::down, "web-0")}},
      {"remove", {web_change(PoolAction::remove, "web-0")}},
  };
  for (const auto& [name, history] : histories) {
    Instance in;
    for (const PoolChange& c : history) in.lb.apply(c);
    const Tuples moved = sent_elsewhere_by_a_stranger(in, history);
    SCOPED_TRACE(name);
    EXPECT_FALSE(moved.empty());
    EXPECT_EQ(in.marked(), moved);
    EXPECT_EQ(in.lb.exceptions(), moved.size());
    ASSERT_EQ(in.sink.events.size(), moved.size());
    for (const LbExceptionEvent& e : in.sink.events) {
      EXPECT_EQ(e.kind, LbExceptionEvent::Kind::became);
      EXPECT_EQ(e.backend(), in.backends.at(e.original)) << "an exception names the backend its connection has";
    }
  }
}

TEST(LbExceptions, EveryConnectionOfADrainedOrRemovedBackendIsOne) {
  for (const PoolAction action : {PoolAction::drain, PoolAction::remove}) {
    Instance in;
    in.lb.apply(web_change(action, "web-1"));
    const Tuples marked = in.marked();
    std::size_t on_web_1 = 0;
    for (const auto& [key, backend] : in.backends) {
      if (backend != "web-1") continue;
      ++on_web_1;
      EXPECT_TRUE(marked.contains(key));
    }
    EXPECT_GT(on_web_1, kConnections / 5U);
  }
}

TEST(LbExceptions, AChangeUndoneUnmarksThemAndTellsSo) {
  Instance in;
  in.lb.apply(web_change(PoolAction::drain, "web-1"));
  const std::size_t became = in.sink.events.size();
  ASSERT_GT(became, 0U);
  in.lb.apply(web_change(PoolAction::weight, "web-1", 1));
  EXPECT_EQ(in.lb.exceptions(), 0U);
  ASSERT_EQ(in.sink.events.size(), 2 * became);
  Tuples ceased;
  for (std::size_t i = became; i < in.sink.events.size(); ++i) {
    EXPECT_EQ(in.sink.events[i].kind, LbExceptionEvent::Kind::ceased);
    ceased.insert(in.sink.events[i].original);
  }
  Tuples first;
  for (std::size_t i = 0; i < became; ++i) first.insert(in.sink.events[i].original);
  EXPECT_EQ(ceased, first);
}

TEST(LbExceptions, AConnectionThatEndsIsOneNoMore) {
  Instance in;
  in.lb.apply(web_change(PoolAction::drain, "web-1"));
  const Tuples marked = in.marked();
  ASSERT_FALSE(marked.empty());
  const FlowKeyV4 reset = *marked.begin();
  run(in.lb, reset, kRst | kAck, kMs);
  run(in.lb, reset, kSyn, 2 * kMs);  // a new connection on the reused port: today's choice, no exception
  EXPECT_EQ(in.lb.exceptions(), marked.size() - 1);
  EXPECT_EQ(in.sink.events.back().kind, LbExceptionEvent::Kind::ceased);
  EXPECT_EQ(in.sink.events.back().original, reset);
  expire_all(in.lb);
  EXPECT_EQ(in.lb.exceptions(), 0U);
  EXPECT_EQ(in.sink.events.size(), 2 * marked.size());
}

TEST(LbExceptions, APeersExceptionsSendAConnectionWithoutStateToItsBackend) {
  Instance first;
  first.lb.apply(web_change(PoolAction::drain, "web-1"));
  ASSERT_FALSE(first.sink.events.empty());
  LbPeerExceptions told(100'000);
  LbPeerReplica from_first(told, 0);
  for (const LbExceptionEvent& e : first.sink.events) ASSERT_TRUE(from_first.apply(sync_record_of(e), 0));

  Lb alone(keyed_config()), sharing(keyed_config());
  RecordingSink sharing_sink;
  sharing.share_exceptions(&sharing_sink, &told);
  for (Lb* lb : {&alone, &sharing}) lb->apply(web_change(PoolAction::drain, "web-1"));
  std::size_t moved_alone = 0;
  for (const LbExceptionEvent& e : first.sink.events) {
    const std::string backend(e.backend());
    EXPECT_EQ(backend_at(run(sharing, e.original, kAck).key.dst_addr), backend);
    moved_alone += backend_at(run(alone, e.original, kAck).key.dst_addr) != backend ? 1 : 0;
  }
  EXPECT_EQ(moved_alone, first.sink.events.size()) << "without them, every one of them breaks";
  EXPECT_EQ(sharing.stats().peer_exceptions_taken, first.sink.events.size());
  EXPECT_EQ(sharing.exceptions(), first.sink.events.size()) << "off today's choice here too: this instance tells of them";
  EXPECT_EQ(sharing_sink.events.size(), first.sink.events.size());

  // A SYN on such a tuple opens a new connection: today's choice, not the old backend.
  const FlowKeyV4 reused = first.sink.events.front().original;
  run(sharing, reused, kRst, kMs);
  EXPECT_EQ(where_a_stranger_sends(alone, reused), backend_at(run(sharing, reused, kSyn, 2 * kMs).key.dst_addr));
}

TEST(LbExceptions, APeerTakesBackOnlyItsOwnAndTheBoundIsCounted) {
  LbPeerExceptions told(2);
  const FlowKeyV4 a = client_key(1), b = client_key(2), c = client_key(3);
  EXPECT_TRUE(told.install(0, a, "web-1"));
  EXPECT_TRUE(told.install(0, b, "web-1"));
  EXPECT_FALSE(told.install(0, c, "web-1"));
  EXPECT_EQ(told.refused_full(), 1U);
  EXPECT_TRUE(told.install(1, a, "web-2")) << "the peer that carries it now";
  told.remove(0, a);
  EXPECT_EQ(told.find(a), "web-2") << "peer 0 no longer owns it";
  told.forget(0);
  EXPECT_EQ(told.size(), 1U);
  EXPECT_FALSE(told.find(b).has_value());
  LbPeerReplica replica(told, 0);
  EXPECT_FALSE(replica.apply(SyncClosed{0, a}, 0)) << "a NAT's record is no balancer's";
}

// Two instances' links over an in-memory wire that loses what `lose` says, on the test's clock.
struct Wire {
  explicit Wire(std::uint64_t b_epoch = 2) { restart_b(b_epoch); }
  void restart_b(std::uint64_t epoch) {
    b_told = std::make_unique<LbPeerExceptions>(10'000);
    b = std::make_unique<LbPeerLink>(key, epoch, 1, *b_told);
  }
  // `a_has`: the first instance's exceptions now (what a resynchronisation sends).
  void run_for(Nanos duration, const std::vector<LbExceptionEvent>& a_has) {
    for (const Nanos end = now + duration; now < end; now += 5 * kMs) {
      for (const std::size_t p : a.take_resync_requests(now)) a.resynchronise(p, a_has);
      for (const std::size_t p : b->take_resync_requests(now)) b->resynchronise(p, {});
      Datagrams to_b, to_a;
      a.poll(0, now, to_b);
      b->poll(0, now, to_a);
      while (!to_b.empty() || !to_a.empty()) {  // answers, and answers to them, within the tick
        Datagrams next_b, next_a;
        for (const auto& d : to_b) {
          ASSERT_LE(d.size(), kSyncMaxDatagram);
          if (lose && lose(d)) continue;
          seen_by_b.push_back(d);
          b->receive(0, d, now, next_a);
        }
        for (const auto& d : to_a) {
          if (!lose || !lose(d)) a.receive(0, d, now, next_b);
        }
        to_b = std::move(next_b);
        to_a = std::move(next_a);
      }
    }
  }
  const SyncKey key{std::vector<std::uint8_t>(32, 0x5a)};
  LbPeerExceptions a_told{10'000};
  LbPeerLink a{key, 1, 1, a_told};
  std::unique_ptr<LbPeerExceptions> b_told;
  std::unique_ptr<LbPeerLink> b;
  std::function<bool(const std::vector<std::uint8_t>&)> lose;
  Datagrams seen_by_b;
  Nanos now = kNanosPerSecond;
};

TEST(LbPeerLink, ExceptionsCrossTheLinkBatchedWhateverItLoses) {
  Instance first;
  Wire wire;
  std::size_t nth = 0;
  wire.lose = [&](const std::vector<std::uint8_t>&) { return ++nth % 3 == 0; };
  wire.run_for(500 * kMs, first.lb.exception_events());
  EXPECT_TRUE(wire.b->holds_all_of(0));
  first.lb.apply(web_change(PoolAction::drain, "web-1"));
  for (const LbExceptionEvent& e : first.sink.events) wire.a.queue(e);
  wire.run_for(2 * kNanosPerSecond, first.lb.exception_events());
  ASSERT_EQ(wire.b_told->size(), first.lb.exceptions());
  for (const LbExceptionEvent& e : first.sink.events) EXPECT_EQ(wire.b_told->find(e.original), std::string(e.backend()));
  const SyncCounters sent = wire.a.counters();
  EXPECT_GT(sent.retransmitted, 0U);
  EXPECT_LT(sent.sent - sent.retransmitted, first.sink.events.size()) << "records batched, many a datagram";

  // Ends tell too: every one of them expires, and the second instance holds none.
  const std::size_t before = first.sink.events.size();
  expire_all(first.lb);
  for (std::size_t i = before; i < first.sink.events.size(); ++i) wire.a.queue(first.sink.events[i]);
  wire.run_for(2 * kNanosPerSecond, first.lb.exception_events());
  EXPECT_EQ(wire.b_told->size(), 0U);
}

TEST(LbPeerLink, APeerThatRestartsGetsTheWholeSetAgain) {
  Instance first;
  first.lb.apply(web_change(PoolAction::drain, "web-1"));
  Wire wire;
  wire.run_for(500 * kMs, first.lb.exception_events());
  ASSERT_EQ(wire.b_told->size(), first.lb.exceptions());
  wire.restart_b(3);
  EXPECT_EQ(wire.b_told->size(), 0U);
  wire.run_for(500 * kMs, first.lb.exception_events());
  EXPECT_EQ(wire.b_told->size(), first.lb.exceptions());
  EXPECT_TRUE(wire.b->holds_all_of(0));
}

TEST(LbPeerLink, ForgedMalformedAndReplayedDatagramsAreRefusedAndCounted) {
  Instance first;
  first.lb.apply(web_change(PoolAction::drain, "web-1"));
  Wire wire;
  wire.run_for(500 * kMs, first.lb.exception_events());
  const std::size_t held = wire.b_told->size();
  ASSERT_GT(held, 0U);
  const SyncCounters before = wire.b->counters();
  Datagrams answers;
  // Replayed: every datagram the second instance took, again.
  for (const auto& d : wire.seen_by_b) wire.b->receive(0, d, wire.now, answers);
  // Forged: a data message that forgets every exception, sealed with another key.
  std::vector<std::uint8_t> payload;
  encode_sync_record(SyncResyncBegin{1}, payload);
  const SyncKey other(std::vector<std::uint8_t>(32, 0x77));
  wire.b->receive(0, seal_sync_message({SyncType::data, 1, 1'000'000, 1'000'000, 0}, payload, other), wire.now, answers);
  // Malformed: cut short, and a claimed ack too short to be one.
  const std::vector<std::uint8_t> last = wire.seen_by_b.back();
  wire.b->receive(0, std::span(last).first(last.size() - 1), wire.now, answers);
  wire.b->receive(0, std::vector<std::uint8_t>{'F', 'T', 'S', 'Y', 1, 2}, wire.now, answers);
  const SyncCounters after = wire.b->counters();
  const auto refused = [&](const SyncCounters& c, SyncRefusal r) { return c.refused[static_cast<std::size_t>(r)]; };
  EXPECT_EQ(refused(after, SyncRefusal::replayed) - refused(before, SyncRefusal::replayed), wire.seen_by_b.size());
  EXPECT_EQ(refused(after, SyncRefusal::forged) - refused(before, SyncRefusal::forged), 1U);
  EXPECT_EQ(refused(after, SyncRefusal::malformed) - refused(before, SyncRefusal::malformed), 2U);
  EXPECT_EQ(wire.b_told->size(), held) << "nothing refused changed what it holds";
}

}  // namespace lb_exceptions_test
}  // namespace flowtrack
