// The Concury load balancer (nf/concury_lb.hpp): new connections spread by weight (a chi-squared
// test), every connection keeps its backend across each kind of pool change, a drained or removed
// backend gets no new connection, answers get the service's address back, and the race of a connection
// the control plane has not heard of when its arrays are rewritten is repaired by the backend's first
// answer and counted. Each in both layouts of Concury's arrays, which the configured connections choose
// (compact/concury_layout.hpp: pairs for 1M, blocks for 8M), and with the control plane in both places
// (on the worker, on a thread of its own).
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "flowtrack/nf/concury_lb.hpp"
#include "flowtrack/nf/lb_consistency.hpp"
#include "lb_rig.hpp"

namespace flowtrack {
namespace {

using lb_rig::run;
using lb_rig::web_service;


// The configured connections (hence the layout), and where the control plane runs.
using Setup = std::tuple<std::size_t, ControlPlanePlace>;
class ConcuryLbInBothLayouts : public ::testing::TestWithParam<Setup> {};

// Concury with a schedule of pool changes applied as their times come and the consistency check
// (runtime/consistency_check.hpp) watching every packet it forwards, as `run --check` runs it.
// `every_timeout`: each of the configuration's timeouts, when not 0 (else the defaults).
class CheckedConcury {
 public:
  CheckedConcury(Setup setup, const std::vector<std::uint32_t>& weights, std::vector<PoolChange> changes = {},
                 std::uint8_t protocol = ipproto::kTcp, Nanos every_timeout = 0)
      : config_(config_of(setup, weights, protocol, every_timeout)),
        lb_(config_, std::get<ControlPlanePlace>(setup)),
        schedule_(std::move(changes), config_.services, config_.maglev_size),
        ledger_(lb_.services(), LinkType::ethernet, config_.timeouts.tcp_timeout(TcpState::syn_sent)) {}

  template <BurstOutput Out>
  void process_burst(std::span<NfPacket> burst, Out& out) {
    apply_due_changes(schedule_, lb_, burst.front().time);
    Watched<Out> watched{out, ledger_};
    lb_.process_burst(burst, watched);
  }
  std::size_t expire(Nanos now, std::size_t budget = kDefaultExpireBudget) { return lb_.expire(now, budget); }
  NfCounters counters() const { return lb_.counters(); }
  const ConcuryStats& stats() const { return lb_.stats(); }
  const ConsistencyCounts& check() const { return ledger_.counts(); }
  std::size_t known_connections() const { return lb_.known_connections(); }
  const std::vector<Service>& services() const { return lb_.services(); }

 private:
  template <class Out>
  struct Watched {
    Out& out;
    ConsistencyLedger& ledger;
    void verdict(const NfPacket& packet, Verdict verdict) {
      if (verdict == Verdict::forward) ledger.forwarded(packet.parsed, packet.frame, packet.time);
      out.verdict(packet, verdict);
    }
    void held(std::span<const std::uint8_t> frame, std::uint32_t wire_length) { out.held(frame, wire_length); }
    void stage_done(NfStage stage) { out.stage_done(stage); }
  };

  static StatefulLbConfig config_of(Setup setup, const std::vector<std::uint32_t>& weights, std::uint8_t protocol,
                                    Nanos every_timeout) {
    StatefulLbConfig config;
    if (every_timeout != 0) {
      config.timeouts.tcp.fill(every_timeout);
      config.timeouts.udp_unreplied = config.timeouts.udp_replied = config.timeouts.icmp = config.timeouts.other = every_timeout;
    }
    config.max_connections = std::get<std::size_t>(setup);
    config.services = {web_service(weights.size(), protocol)};
    for (std::size_t b = 0; b < weights.size(); ++b) config.services[0].backends[b].weight = weights[b];
    config.maglev_size = 1009;  // room for 10 backends
    return config;
  }

  StatefulLbConfig config_;
  ConcuryLb lb_;
  PoolChangeSchedule schedule_;
  ConsistencyLedger ledger_;
};

PoolChange change(double at_seconds, PoolAction action, std::size_t backend, std::uint32_t weight = 1) {
  return {static_cast<Nanos>(at_seconds * kNanosPerSecond), "web", action,
          {"web-" + std::to_string(backend), to_network32(0x0a010000 + static_cast<std::uint32_t>(backend) + 1), to_network16(8443), weight}};
}

// Client n of the tests: its own address, one port.
FlowKeyV4 client(std::uint32_t n, std::uint8_t protocol = ipproto::kTcp) {
  return FlowKeyV4::from_host(0x0a000000 + n, lb_rig::kVip, 40000, 443, protocol);
}

// The backend (web-i: i) a packet left for (to_network32 swaps bytes both ways).
std::size_t backend_of(const lb_rig::Output& out) { return to_network32(out.key.dst_addr) - 0x0a010001; }

// What backend i's answer to `client` looks like before the balancer.
FlowKeyV4 answer_from(std::size_t backend, const FlowKeyV4& client) {
  return FlowKeyV4::from_host(0x0a010001 + static_cast<std::uint32_t>(backend), to_network32(client.src_addr), 8443,
                              to_network16(client.src_port), ipproto::kTcp);
}

TEST_P(ConcuryLbInBothLayouts, NewConnectionSharesFollowTheWeightsByChiSquared) {
  const std::vector<std::uint32_t> weights{1, 2, 3, 4};
  CheckedConcury lb(GetParam(), weights);
  constexpr std::uint32_t kConnections = 20000;
  std::vector<double> counts(weights.size(), 0);
  for (std::uint32_t n = 0; n < kConnections; ++n) ++counts.at(backend_of(run(lb, client(n), tcpflag::kSyn)));
  // Pearson's statistic against the weights' shares; 3 degrees of freedom, 16.27 at p = 0.001.
  double chi2 = 0;
  for (std::size_t b = 0; b < weights.size(); ++b) {
    const double expected = kConnections * weights[b] / 10.0;
    chi2 += (counts[b] - expected) * (counts[b] - expected) / expected;
  }
  EXPECT_LT(chi2, 16.27) << counts[0] << " " << counts[1] << " " << counts[2] << " " << counts[3];
}

TEST_P(ConcuryLbInBothLayouts, EveryConnectionKeepsItsBackendAcrossAddDrainWeightAndRemove) {
  CheckedConcury lb(GetParam(), {1, 1, 1}, {change(1, PoolAction::add, 3, 3), change(2, PoolAction::drain, 0),
                                          change(3, PoolAction::weight, 1, 5), change(4, PoolAction::remove, 2)});
  std::map<std::uint32_t, std::size_t> backend;  // client -> its connection's backend
  std::uint32_t next = 0;
  for (int step = 0; step <= 4; ++step) {
    const Nanos now = step * kNanosPerSecond + kNanosPerSecond / 2;
    // Every connection opened so far: its next packet goes where its first went.
    for (const auto& [c, b] : backend) ASSERT_EQ(backend_of(run(lb, client(c), tcpflag::kAck, now)), b) << "step " << step;
    // New connections: never to the drained (from step 2) or the removed (from step 4) backend.
    for (std::uint32_t n = 0; n < 1500; ++n, ++next) {
      const std::size_t b = backend_of(run(lb, client(next), tcpflag::kSyn, now));
      EXPECT_FALSE(step >= 2 && b == 0) << "step " << step;
      EXPECT_FALSE(step >= 4 && b == 2) << "step " << step;
      EXPECT_FALSE(step < 1 && b == 3) << "step " << step;
      backend[next] = b;
    }
  }
  EXPECT_EQ(lb.stats().rewrites, 4u);
  EXPECT_EQ(lb.check().violations, 0u);
  EXPECT_EQ(lb.check().false_hits, 0u);
  EXPECT_EQ(lb.counters().connections_created, next);
}

// With every timeout at 60 s, connections whose backends answer every 50 s: each answer moves the
// connection's end, so the control plane knows it throughout and a pool change at 280 s, long after
// the openings, leaves every one on its backend. (Were it forgotten 60 s after its last end-setting
// report, it would be unknown from 60 s to its next answer but one, and the change falls in such a gap.)
// Once the answers stop, each is forgotten about the timeout later.
TEST_P(ConcuryLbInBothLayouts, AnAnsweredConnectionKeepsItsBackendAcrossARewriteLongAfterItsOpening) {
  constexpr Nanos kTimeout = 60 * kNanosPerSecond;
  CheckedConcury lb(GetParam(), {1, 1, 1}, {change(280, PoolAction::add, 3, 10)}, ipproto::kTcp, kTimeout);
  constexpr std::uint32_t kClients = 300;
  std::map<std::uint32_t, std::size_t> backend;
  for (std::uint32_t n = 0; n < kClients; ++n) backend[n] = backend_of(run(lb, client(n), tcpflag::kSyn, 0));
  for (const auto& [c, b] : backend) run(lb, answer_from(b, client(c)), tcpflag::kSyn | tcpflag::kAck, kNanosPerSecond);
  for (Nanos s = 10; s <= 400; s += 10) {
    const Nanos now = s * kNanosPerSecond;
    if (s % 50 == 0) {
      for (const auto& [c, b] : backend) run(lb, answer_from(b, client(c)), tcpflag::kAck, now);
    }
    if (s == 290 || s == 400) {
      for (const auto& [c, b] : backend) ASSERT_EQ(backend_of(run(lb, client(c), tcpflag::kAck, now)), b) << c << " at " << s;
    }
    lb.expire(now);
  }
  EXPECT_EQ(lb.stats().rewrites, 1u);
  EXPECT_EQ(lb.check().violations, 0u);
  EXPECT_EQ(lb.known_connections(), kClients);
  lb.expire(400 * kNanosPerSecond + kTimeout + kTimeout / 4);
  EXPECT_EQ(lb.known_connections(), 0u);
}

// A backend removed and added back at its endpoint, again and again (a flapping health check): its
// connections keep it throughout, it takes new ones whenever it is in the pool, and the service lists it
// once, so a rewrite walks the same list at the last flap as at the first.
TEST_P(ConcuryLbInBothLayouts, ABackendThatComesAndGoesKeepsItsConnectionsAndOneEntry) {
  std::vector<PoolChange> flaps;
  for (int round = 0; round < 50; ++round) {
    flaps.push_back(change(2 * round + 1, PoolAction::remove, 0));
    flaps.push_back(change(2 * round + 2, PoolAction::add, 0));
  }
  CheckedConcury lb(GetParam(), {1, 1}, flaps);
  std::map<std::uint32_t, std::size_t> backend;
  std::uint32_t next = 0;
  for (int step = 0; step <= 100; ++step) {
    const Nanos now = step * kNanosPerSecond + kNanosPerSecond / 2;
    for (std::uint32_t n = 0; n < 20; ++n, ++next) {
      backend[next] = backend_of(run(lb, client(next), tcpflag::kSyn, now));
      ASSERT_FALSE(step % 2 == 1 && backend[next] == 0) << "step " << step;  // removed in odd steps
    }
  }
  for (const auto& [c, b] : backend) ASSERT_EQ(backend_of(run(lb, client(c), tcpflag::kAck, 101 * kNanosPerSecond)), b);
  EXPECT_EQ(lb.services()[0].backends().size(), 2u);
  EXPECT_EQ(lb.stats().rewrites, 100u);
  EXPECT_EQ(lb.check().violations, 0u);
  EXPECT_EQ(lb.check().false_hits, 0u);
}

TEST_P(ConcuryLbInBothLayouts, NewConnectionsLandingOnADrainedBackendsPinGoElsewhereAndStayThere) {
  // Eight backends, seven drained at 1 s while they hold connections: seven pins, one live backend.
  std::vector<PoolChange> drains;
  for (std::size_t b = 0; b < 7; ++b) drains.push_back(change(1, PoolAction::drain, b));
  CheckedConcury lb(GetParam(), std::vector<std::uint32_t>(8, 1), drains);
  for (std::uint32_t n = 0; n < 200; ++n) run(lb, client(n), tcpflag::kSyn, 0);
  std::map<std::uint32_t, std::size_t> backend;
  for (std::uint32_t n = 200; n < 10200; ++n) {
    backend[n] = backend_of(run(lb, client(n), tcpflag::kSyn, 2 * kNanosPerSecond));
    ASSERT_EQ(backend[n], 7u);
  }
  // Seven codes in 4096 are pins: about seventeen of the 10000 landed on one and were sent to web-7.
  EXPECT_GT(lb.stats().rehomed, 0u);
  for (const auto& [c, b] : backend) ASSERT_EQ(backend_of(run(lb, client(c), tcpflag::kAck, 3 * kNanosPerSecond)), b);
  EXPECT_EQ(lb.check().violations, 0u);
  EXPECT_EQ(lb.check().false_hits, 0u);
}

TEST_P(ConcuryLbInBothLayouts, AnswersGetTheServicesAddressAndPortBack) {
  CheckedConcury lb(GetParam(), {1, 1, 1});
  const FlowKeyV4 c = client(7);
  const std::size_t b = backend_of(run(lb, c, tcpflag::kSyn));
  const lb_rig::Output back = run(lb, answer_from(b, c), tcpflag::kSyn | tcpflag::kAck);
  EXPECT_EQ(back.verdict, Verdict::forward);
  EXPECT_EQ(back.key, c.reversed());
}

// A connection met mid-stream (no SYN: the control plane has not heard of it) whose arrays are rewritten
// before its backend answers: the answer repairs it, so its client's later packets go back there.
TEST_P(ConcuryLbInBothLayouts, AConnectionMetMidStreamIsRepairedByItsBackendsFirstAnswer) {
  CheckedConcury lb(GetParam(), {1, 1, 1}, {change(1, PoolAction::weight, 0, 5)});
  std::map<std::uint32_t, std::size_t> backend;
  for (std::uint32_t n = 0; n < 500; ++n) backend[n] = backend_of(run(lb, client(n), tcpflag::kAck, kNanosPerSecond / 2));
  EXPECT_EQ(lb.counters().connections_created, 0u);  // an ACK reports nothing
  for (const auto& [c, b] : backend) run(lb, answer_from(b, client(c)), tcpflag::kAck, 2 * kNanosPerSecond);
  EXPECT_EQ(lb.counters().connections_created, 500u);
  EXPECT_GT(lb.stats().repairs, 0u);
  for (const auto& [c, b] : backend) ASSERT_EQ(backend_of(run(lb, client(c), tcpflag::kAck, 3 * kNanosPerSecond)), b);
  EXPECT_EQ(lb.check().violations, 0u);
}

// The race left: a client packet of such a connection between the rewrite and its backend's first
// answer may go elsewhere. The check counts each such packet; the answer still repairs the connection.
TEST_P(ConcuryLbInBothLayouts, TheRaceOfAnUnreportedConnectionIsCountedAndRepaired) {
  CheckedConcury lb(GetParam(), {1, 1, 1}, {change(1, PoolAction::weight, 0, 5)});
  std::map<std::uint32_t, std::size_t> backend;
  for (std::uint32_t n = 0; n < 500; ++n) backend[n] = backend_of(run(lb, client(n), tcpflag::kAck, kNanosPerSecond / 2));
  std::uint64_t moved = 0;
  for (const auto& [c, b] : backend) moved += backend_of(run(lb, client(c), tcpflag::kAck, kNanosPerSecond * 3 / 2)) != b;
  EXPECT_GT(moved, 0u);
  EXPECT_EQ(lb.check().violations, moved);
  for (const auto& [c, b] : backend) run(lb, answer_from(b, client(c)), tcpflag::kAck, 2 * kNanosPerSecond);
  // Every moved connection is repaired; a repair's refill may move a few more connections not yet
  // answered (those with a cell in the repaired key's tree), which their own answers repair.
  EXPECT_GE(lb.stats().repairs, moved);
  EXPECT_LE(lb.stats().repairs, moved + moved / 10);
  for (const auto& [c, b] : backend) ASSERT_EQ(backend_of(run(lb, client(c), tcpflag::kAck, 3 * kNanosPerSecond)), b);
  EXPECT_EQ(lb.check().violations, moved);
}

// RFC 9293, 3.10.7.4: a client sends a SYN on the endpoints of an answered connection only to open a
// new one. When the answered connection's backend was drained since, the new one goes to a backend that
// takes new connections, and stays there; the check counts it as the endpoints' next connection.
TEST_P(ConcuryLbInBothLayouts, ASynOnTheEndpointsOfAnAnsweredConnectionOpensANewOneAwayFromADrainedBackend) {
  CheckedConcury lb(GetParam(), {1, 1, 1}, {change(1, PoolAction::drain, 0), change(1, PoolAction::drain, 1)});
  std::map<std::uint32_t, std::size_t> first;
  for (std::uint32_t n = 0; n < 300; ++n) first[n] = backend_of(run(lb, client(n), tcpflag::kSyn, 0));
  for (const auto& [c, b] : first) {
    run(lb, answer_from(b, client(c)), tcpflag::kSyn | tcpflag::kAck, kNanosPerSecond / 2);
    run(lb, client(c), tcpflag::kAck, kNanosPerSecond / 2);
  }
  std::size_t on_drained = 0;
  for (const auto& [c, b] : first) {
    on_drained += b != 2;
    ASSERT_EQ(backend_of(run(lb, client(c), tcpflag::kSyn, 2 * kNanosPerSecond)), 2u) << c;
    ASSERT_EQ(backend_of(run(lb, client(c), tcpflag::kAck, 3 * kNanosPerSecond)), 2u) << c;
  }
  EXPECT_GT(on_drained, 150u);
  EXPECT_EQ(lb.stats().rehomed, on_drained);
  EXPECT_EQ(lb.check().false_hits, 0u);
  EXPECT_EQ(lb.check().violations, 0u);
}

// Its first SYN unanswered, a client resends it (RFC 9293, 3.8.1): the resent SYN belongs to the same
// connection, which stays on its backend though that was drained since; past the handshake timeout
// (Linux's SYN_SENT timeout, 120 s) a SYN opens a new connection, sent elsewhere.
TEST_P(ConcuryLbInBothLayouts, AResentSynStaysWithItsDrainedBackendUntilTheHandshakeTimeout) {
  CheckedConcury lb(GetParam(), {1, 1, 1}, {change(1, PoolAction::drain, 0), change(1, PoolAction::drain, 1)});
  std::map<std::uint32_t, std::size_t> first;
  for (std::uint32_t n = 0; n < 300; ++n) first[n] = backend_of(run(lb, client(n), tcpflag::kSyn, 0));
  for (const auto& [c, b] : first) ASSERT_EQ(backend_of(run(lb, client(c), tcpflag::kSyn, 3 * kNanosPerSecond)), b) << c;
  EXPECT_EQ(lb.stats().rehomed, 0u);
  for (const auto& [c, b] : first) ASSERT_EQ(backend_of(run(lb, client(c), tcpflag::kSyn, 121 * kNanosPerSecond)), 2u) << c;
  EXPECT_GT(lb.stats().rehomed, 150u);
  EXPECT_EQ(lb.check().false_hits, 0u);
  EXPECT_EQ(lb.check().violations, 0u);
}

// Linux's closing-state timeouts (the longest, FIN_WAIT's and TIME_WAIT's, 120 s): a connection whose FIN
// or RST went through is forgotten 120 s after the last one, whichever side sent it (at most 15 s
// later: ConcuryLb::expire waits for an eighth of the timeout's worth of ends); one that never
// closes stays known; the endpoints of a forgotten one open a new connection like any client's.
TEST_P(ConcuryLbInBothLayouts, AClosedConnectionIsForgottenTheClosingTimeoutAfterItsLastFinOrRst) {
  CheckedConcury lb(GetParam(), {1, 1, 1});
  constexpr std::uint32_t kClients = 200;
  std::map<std::uint32_t, std::size_t> first;
  for (std::uint32_t n = 0; n < 2 * kClients; ++n) first[n] = backend_of(run(lb, client(n), tcpflag::kSyn, 0));
  for (const auto& [c, b] : first) run(lb, answer_from(b, client(c)), tcpflag::kSyn | tcpflag::kAck, kNanosPerSecond / 2);
  for (std::uint32_t n = 0; n < kClients; ++n) {  // the first half closes: by FINs, or by a backend's RST
    if (n % 2 == 0) {
      run(lb, client(n), tcpflag::kFin | tcpflag::kAck, 10 * kNanosPerSecond);
      run(lb, answer_from(first[n], client(n)), tcpflag::kFin | tcpflag::kAck, 11 * kNanosPerSecond);
    } else {
      run(lb, answer_from(first[n], client(n)), tcpflag::kRst, 11 * kNanosPerSecond);
    }
  }
  EXPECT_EQ(lb.known_connections(), 2u * kClients);
  EXPECT_EQ(lb.expire(131 * kNanosPerSecond - 1), 0u);
  EXPECT_EQ(lb.expire(146 * kNanosPerSecond), kClients);  // at most an eighth of the timeout late
  EXPECT_EQ(lb.known_connections(), kClients);
  EXPECT_EQ(lb.counters().connections_expired, kClients);
  for (std::uint32_t n = kClients; n < 2 * kClients; ++n) {  // the second half, never closed, keeps its backend
    ASSERT_EQ(backend_of(run(lb, client(n), tcpflag::kAck, 147 * kNanosPerSecond)), first[n]) << n;
  }
  for (std::uint32_t n = 0; n < kClients; ++n) run(lb, client(n), tcpflag::kSyn, 148 * kNanosPerSecond);
  EXPECT_EQ(lb.known_connections(), 2u * kClients);
  EXPECT_EQ(lb.counters().connections_created, 3u * kClients);
  EXPECT_EQ(lb.check().violations, 0u);
  EXPECT_EQ(lb.check().false_hits, 0u);
}

// A client that has sent its FIN still receives, and acknowledges, for as long as the backend sends
// (RFC 9293, 3.6): its half-closed connection stays known past the closing timeout, so its ACKs keep
// their backend across a pool change that rewrites the arrays; the backend's FIN closes it, and it is
// forgotten the closing timeout later.
TEST_P(ConcuryLbInBothLayouts, AHalfClosedConnectionKeepsItsBackendPastTheClosingTimeoutRfc9293Section3_6) {
  CheckedConcury lb(GetParam(), {1, 1, 1}, {change(200, PoolAction::add, 3, 3)});
  constexpr std::uint32_t kClients = 300;
  std::map<std::uint32_t, std::size_t> first;
  for (std::uint32_t n = 0; n < kClients; ++n) first[n] = backend_of(run(lb, client(n), tcpflag::kSyn, 0));
  for (const auto& [c, b] : first) {
    run(lb, answer_from(b, client(c)), tcpflag::kSyn | tcpflag::kAck, kNanosPerSecond / 2);
    run(lb, client(c), tcpflag::kFin | tcpflag::kAck, 10 * kNanosPerSecond);
  }
  EXPECT_EQ(lb.expire(150 * kNanosPerSecond), 0u);
  for (const auto& [c, b] : first) {
    run(lb, answer_from(b, client(c)), tcpflag::kAck, 201 * kNanosPerSecond);
    ASSERT_EQ(backend_of(run(lb, client(c), tcpflag::kAck, 201 * kNanosPerSecond)), b) << c;
  }
  for (const auto& [c, b] : first) run(lb, answer_from(b, client(c)), tcpflag::kFin | tcpflag::kAck, 210 * kNanosPerSecond);
  EXPECT_EQ(lb.expire(346 * kNanosPerSecond), kClients);  // at most an eighth of the closing timeout late
  EXPECT_EQ(lb.check().violations, 0u);
  EXPECT_EQ(lb.check().false_hits, 0u);
}

// A datagram flow lives the longer UDP timeout (120 s by default, Linux's UDP stream timeout) from its
// last datagram: one that keeps sending keeps its backend across a pool change that rewrites the arrays,
// one that stopped is forgotten (at most an eighth of the timeout late, or one timeout more when its
// last datagrams hit the known-connection cache: concury_learning.hpp).
TEST_P(ConcuryLbInBothLayouts, ADatagramFlowIsKeptWhileItSendsAndForgottenTheUdpTimeoutAfterItsLast) {
  CheckedConcury lb(GetParam(), {1, 1, 1}, {change(300, PoolAction::add, 3, 3)}, ipproto::kUdp);
  constexpr std::uint32_t kFlows = 200;
  std::map<std::uint32_t, std::size_t> first;
  for (std::uint32_t n = 0; n < kFlows; ++n) first[n] = backend_of(lb_rig::run_udp(lb, client(n, ipproto::kUdp), 0));
  for (Nanos s = 50; s <= 400; s += 50) {  // the first half goes on sending
    for (std::uint32_t n = 0; n < kFlows / 2; ++n) {
      ASSERT_EQ(backend_of(lb_rig::run_udp(lb, client(n, ipproto::kUdp), s * kNanosPerSecond)), first[n]) << n << " at " << s;
    }
    if (s == 150) {
      EXPECT_EQ(lb.expire(s * kNanosPerSecond), kFlows / 2);  // the second half, silent since 0 s
      EXPECT_EQ(lb.known_connections(), kFlows / 2);
    }
  }
  EXPECT_EQ(lb.expire(520 * kNanosPerSecond - 1), 0u);
  EXPECT_EQ(lb.expire(655 * kNanosPerSecond), kFlows / 2);
  EXPECT_EQ(lb.known_connections(), 0u);
  EXPECT_EQ(lb.counters().connections_created, kFlows);
  EXPECT_EQ(lb.check().violations, 0u);
  EXPECT_EQ(lb.check().false_hits, 0u);
}

// The known-connection cache's tags hold a service in 15 bits beside the client endpoint and its
// half-open bit (nf/internal/concury_learning.hpp): a configuration with more services is refused before any is
// built, with a message that says so. (One service fewer is taken: every other Concury test, at a size
// too slow to build here.)
TEST(ConcuryLbConfig, MoreServicesThanTheCacheTagsHoldAreRefused) {
  StatefulLbConfig config;
  config.maglev_size = 251;
  for (std::uint32_t s = 0; s < ConcuryLearning::kMaxServices; ++s) {
    ServiceConfig service = web_service(1);
    service.name = "s" + std::to_string(s);
    service.port = to_network16(static_cast<std::uint16_t>(1 + s));
    config.services.push_back(service);
  }
  try {
    ConcuryLb lb(config);
    FAIL() << "a configuration of " << config.services.size() << " services was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("at most 32766"), std::string::npos) << e.what();
  }
}

// Every backend a service ever listed may hold a pin, a Dcode of its row's 4096: a schedule that would
// list more (each name, address and port once) is found, with the change and the count; one that lists
// exactly that many is not.
TEST(ConcuryLbConfig, AScheduleListingMoreBackendsThanDcodesIsFound) {
  const std::vector<ServiceConfig> services = {web_service(1)};
  const auto schedule = [](std::uint32_t added) {
    std::vector<PoolChange> changes;
    for (std::uint32_t n = 1; n <= added; ++n) {
      const BackendConfig b{"n" + std::to_string(n), to_network32(0x0b000000 + n), to_network16(8443), 1};
      changes.push_back({2 * Nanos{n}, "web", PoolAction::add, b});
      changes.push_back({2 * Nanos{n} + 1, "web", PoolAction::remove, b});
    }
    return changes;
  };
  EXPECT_EQ(ConcuryLb::listing_beyond(schedule(4095), services), std::nullopt);
  const auto beyond = ConcuryLb::listing_beyond(schedule(4096), services);
  ASSERT_TRUE(beyond.has_value());
  EXPECT_EQ(beyond->first, 2u * 4095);  // the 4096th add
  EXPECT_EQ(beyond->second, 4097u);
}

INSTANTIATE_TEST_SUITE_P(Layouts, ConcuryLbInBothLayouts,
                         ::testing::Combine(::testing::Values(std::size_t{1} << 20, std::size_t{8} << 20),
                                            ::testing::Values(ControlPlanePlace::worker, ControlPlanePlace::own_thread)),
                         [](const ::testing::TestParamInfo<Setup>& info) {
                           return std::string(std::get<std::size_t>(info.param) == (std::size_t{1} << 20) ? "pairs" : "blocks") +
                                  (std::get<ControlPlanePlace>(info.param) == ControlPlanePlace::worker ? "_on_worker" : "_own_thread");
                         });

}  // namespace
}  // namespace flowtrack
