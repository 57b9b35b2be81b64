// Concury's control plane on a thread of its own (ControlPlanePlace::own_thread, nf/concury_lb.hpp) is
// the worker's control plane moved, not another one: the same packets, in the same bursts, give the
// same frames out, counters, stats and per-backend counts as with the control plane on the worker, over
// a workload that reaches every sync point (pool changes, pins rehomed, mid-stream connections
// repaired, answers two services' arrays both claim, expiries), SYNs on known endpoints, resent or
// opening new connections, and FINs and RSTs of either side, which end connections sooner. Runs under
// ThreadSanitizer in `make test`, which checks the hand-over of the control plane at each sync point.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "flowtrack/nf/concury_lb.hpp"
#include "flowtrack/nf/lb_consistency.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/util/random.hpp"

namespace flowtrack {
namespace {

constexpr std::uint32_t kVip = 0xc6120001;
constexpr std::size_t kBackends = 8;
constexpr Nanos kMs = kNanosPerSecond / 1000;

std::uint32_t backend_address(std::size_t b) { return 0x0a010001 + static_cast<std::uint32_t>(b); }

// Two services on the same eight backends (web on 443, alt on 8080, both to port 8443): a backend's
// answer is listed by both, so the two services' arrays may both claim it.
StatefulLbConfig config() {
  StatefulLbConfig c;  // its changes: the schedule each instance is given (Scheduled)
  for (const auto& [name, port] : {std::pair<std::string, std::uint16_t>{"web", 443}, {"alt", 8080}}) {
    ServiceConfig s{name, to_network32(kVip), to_network16(port), ipproto::kTcp, {}};
    for (std::size_t b = 0; b < kBackends; ++b) {
      s.backends.push_back({"b" + std::to_string(b), to_network32(backend_address(b)), to_network16(8443), 1});
    }
    c.services.push_back(s);
  }
  c.maglev_size = 1009;
  c.max_connections = 1 << 20;
  // Connections are forgotten 150 ms after they were learnt, within the run, and 60 ms after a FIN or RST.
  c.timeouts.tcp.fill(150 * kMs);
  for (const TcpState closing : {TcpState::fin_wait, TcpState::close_wait, TcpState::last_ack, TcpState::time_wait, TcpState::close}) {
    c.timeouts.tcp[static_cast<std::size_t>(closing)] = 60 * kMs;
  }
  // A connection learnt from its SYN is half-open for 40 ms: a SYN of its endpoints is a resent one before,
  // a new connection after (or once it is answered).
  c.timeouts.tcp[static_cast<std::size_t>(TcpState::syn_sent)] = 40 * kMs;
  c.timeouts.udp_unreplied = c.timeouts.udp_replied = c.timeouts.icmp = c.timeouts.other = 150 * kMs;
  auto change = [](double ms, PoolAction action, std::size_t b, std::uint32_t weight = 1) {
    return PoolChange{static_cast<Nanos>(ms * static_cast<double>(kMs)), "web", action,
                      {"b" + std::to_string(b), to_network32(backend_address(b)), to_network16(8443), weight}};
  };
  // Six of web's backends drained while they hold connections: six pins for the new ones to land on.
  for (std::size_t b = 0; b < 6; ++b) c.changes.push_back(change(100, PoolAction::drain, b));
  c.changes.push_back(change(200, PoolAction::weight, 6, 3));
  c.changes.push_back(change(250, PoolAction::add, kBackends, 2));
  c.changes.push_back(change(300, PoolAction::remove, 7));
  return c;
}

// What left the function for one packet.
struct Out {
  Verdict verdict;
  std::vector<std::uint8_t> frame;
  friend bool operator==(const Out&, const Out&) = default;
};

struct Collect {
  std::vector<Out>* outs;
  void verdict(const NfPacket& p, Verdict v) { outs->push_back({v, {p.frame.begin(), p.frame.end()}}); }
  void held(std::span<const std::uint8_t>, std::uint32_t) {}
  void stage_done(NfStage) {}
};

// An instance with its schedule of pool changes, applied before the burst they are due by, and the
// consistency check watching what it forwards.
struct Scheduled {
  explicit Scheduled(ControlPlanePlace place)
      : lb(config(), place),
        schedule(config().changes, config().services, config().maglev_size),
        ledger(lb.services(), LinkType::ethernet, config().timeouts.tcp_timeout(TcpState::syn_sent)) {}
  ConcuryLb lb;
  PoolChangeSchedule schedule;
  ConsistencyLedger ledger;
};

std::vector<Out> run_burst(Scheduled& instance, const std::vector<std::vector<std::uint8_t>>& frames, Nanos now) {
  ConcuryLb& lb = instance.lb;
  apply_due_changes(instance.schedule, lb, now);
  std::vector<std::vector<std::uint8_t>> copies = frames;
  std::vector<NfPacket> burst;
  for (auto& f : copies) {
    NfPacket p{f, {}, static_cast<std::uint32_t>(f.size())};
    EXPECT_EQ(parse_frame(f, LinkType::ethernet, p.parsed), ParseStatus::ok);
    p.time = now;
    p.hash = packet_hash(p.parsed);
    burst.push_back(p);
  }
  std::vector<Out> outs;
  Collect out{&outs};
  lb.process_burst(burst, out);
  for (std::size_t i = 0; i < burst.size(); ++i) {
    if (outs[i].verdict == Verdict::forward) instance.ledger.forwarded(burst[i].parsed, burst[i].frame, now);
  }
  return outs;
}

// The workload: a burst of 32 packets a millisecond for 400 ms, drawn by a seeded generator from what
// the function did so far (both instances do the same, or the test fails at the first difference).
class Workload {
 public:
  std::vector<std::vector<std::uint8_t>> next_burst() {
    std::vector<std::vector<std::uint8_t>> frames;
    sent_.clear();
    for (int k = 0; k < 32; ++k) {
      const std::uint64_t kind = rng_.next() % 100;
      const std::uint64_t port_pick = rng_.next() % 4;
      const std::uint16_t service_port = port_pick == 0 ? 8080 : 443;
      if (kind < 35 || clients_.empty()) {  // an opening
        const Client c{0x0b000000 + next_client_++, service_port};
        frames.push_back(to_service(c, tcpflag::kSyn));
        sent_.push_back(c);
      } else if (kind < 55) {  // a connection met mid-stream: its client's ACK
        const Client c{0x0c000000 + next_client_++, service_port};
        frames.push_back(to_service(c, tcpflag::kAck));
        sent_.push_back(c);
      } else if (kind < 75) {  // a known client's next packet; its SYN (a resent one, or a new connection
                               // on its endpoints); or its FIN
        const Client c = clients_[rng_.next() % clients_.size()].first;
        frames.push_back(to_service(c, kind < 65 ? tcpflag::kAck : kind < 70 ? tcpflag::kSyn : tcpflag::kFin | tcpflag::kAck));
        sent_.push_back(c);
      } else {  // the backend a client was sent to answers (for a mid-stream one, perhaps after a rewrite),
                // one answer in ten a FIN or a RST
        const auto& [c, backend] = clients_[rng_.next() % clients_.size()];
        const std::uint8_t flags = kind < 95 ? tcpflag::kAck : kind < 98 ? tcpflag::kFin | tcpflag::kAck : tcpflag::kRst;
        frames.push_back(build_frame(
            FrameSpec::tcp4(FlowKeyV4::from_host(backend_address(backend), c.address, 8443, 40000, ipproto::kTcp), flags)));
        sent_.push_back({0, 0});
      }
    }
    return frames;
  }
  // Where the burst's client packets went (answers sent nothing to remember).
  void sent(const std::vector<Out>& outs) {
    for (std::size_t i = 0; i < outs.size(); ++i) {
      if (sent_[i].address == 0 || outs[i].verdict != Verdict::forward) continue;
      ParsedPacket p;
      ASSERT_EQ(parse_frame(outs[i].frame, LinkType::ethernet, p), ParseStatus::ok);
      clients_.push_back({sent_[i], to_network32(p.key4.dst_addr) - backend_address(0)});
    }
  }

 private:
  struct Client {
    std::uint32_t address;
    std::uint16_t service_port;
  };
  std::vector<std::uint8_t> to_service(const Client& c, std::uint8_t flags) const {
    return build_frame(FrameSpec::tcp4(FlowKeyV4::from_host(c.address, kVip, 40000, c.service_port, ipproto::kTcp), flags));
  }

  Random rng_{20261127};
  std::uint32_t next_client_ = 1;
  std::vector<std::pair<Client, std::uint32_t>> clients_;  // a client and the backend its first packet went to
  std::vector<Client> sent_;                               // the burst's: its client, or address 0 for an answer
};

TEST(ConcuryControlThread, GivesTheSameFramesCountersAndStatsAsTheWorkersControlPlane) {
  Scheduled worker_instance(ControlPlanePlace::worker);
  Scheduled thread_instance(ControlPlanePlace::own_thread);
  ConcuryLb& on_worker = worker_instance.lb;
  ConcuryLb& on_thread = thread_instance.lb;
  ASSERT_EQ(on_thread.control_plane_place(), ControlPlanePlace::own_thread);
  Workload workload;
  std::uint64_t expired = 0;
  for (int ms = 0; ms < 400; ++ms) {
    const Nanos now = static_cast<Nanos>(ms) * kMs;
    const std::vector<std::vector<std::uint8_t>> frames = workload.next_burst();
    const std::vector<Out> worker_outs = run_burst(worker_instance, frames, now);
    ASSERT_EQ(run_burst(thread_instance, frames, now), worker_outs) << "at " << ms << " ms";
    workload.sent(worker_outs);
    const std::size_t forgotten = on_worker.expire(now, 64);
    ASSERT_EQ(on_thread.expire(now, 64), forgotten) << "at " << ms << " ms";
    expired += forgotten;
  }
  const NfCounters w = on_worker.counters(), t = on_thread.counters();
  EXPECT_EQ(t.forwarded, w.forwarded);
  EXPECT_EQ(t.rewritten, w.rewritten);
  EXPECT_EQ(t.passed, w.passed);
  EXPECT_EQ(t.drops, w.drops);
  EXPECT_EQ(t.connections_created, w.connections_created);
  EXPECT_EQ(t.connections_expired, w.connections_expired);
  EXPECT_EQ(t.connections_expired, expired);
  EXPECT_EQ(on_thread.known_connections(), on_worker.known_connections());
  for (std::uint32_t s = 0; s < 2; ++s) {
    for (std::uint16_t b = 0; b <= kBackends; ++b) EXPECT_EQ(on_thread.new_connections(s, b), on_worker.new_connections(s, b));
  }
  const ConcuryStats& ws = on_worker.stats();
  const ConcuryStats& ts = on_thread.stats();
  EXPECT_EQ(ts.rewrites, ws.rewrites);
  EXPECT_EQ(ts.repairs, ws.repairs);
  EXPECT_EQ(ts.rehomed, ws.rehomed);
  EXPECT_EQ(ts.syncs, ws.syncs);
  EXPECT_EQ(thread_instance.ledger.counts().violations, worker_instance.ledger.counts().violations);
  EXPECT_EQ(thread_instance.ledger.counts().false_hits, 0u);
  // The workload reached every sync point.
  EXPECT_EQ(ws.rewrites, 9u);
  EXPECT_GT(ws.repairs, 0u);
  EXPECT_GT(ws.rehomed, 0u);
  EXPECT_GT(expired, 0u);
  EXPECT_GT(w.connections_created, 0u);
}

}  // namespace
}  // namespace flowtrack
