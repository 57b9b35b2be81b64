// The stateful LB's boundary (stateful_lb.hpp): through the clients' port only a service's traffic goes
// on; from the backends' port and on a replay, what is not the balancer's passes. And its gauges: each
// backend's live connections by phase (opening, established, closing), as the connections' TCP states
// move, and back to zero when they end.
#include <gtest/gtest.h>

#include "lb_rig.hpp"

namespace flowtrack {
namespace {

using namespace lb_rig;
using namespace tcpflag;

constexpr std::uint32_t kBackend0 = 0x0a010001;  // web-0, host order

std::uint64_t drop_count(const Lb& lb, NfDrop reason) { return lb.counters().drops[static_cast<std::size_t>(reason)]; }

TEST(LbBoundary, FromTheClientsPortOnlyAServicesTrafficGoesOn) {
  Lb lb = make_lb();
  // A connection to the service: its packets from the clients' port go to its backend.
  const Output syn = run(lb, client_key(40000), kSyn, 0, 0, PortRole::clients);
  ASSERT_EQ(syn.verdict, Verdict::forward);
  EXPECT_NE(syn.key.dst_addr, to_network32(kVip));
  EXPECT_EQ(run_spec(lb, FrameSpec::tcp4(syn.key.reversed(), kSyn | kAck), 0, PortRole::backends).key, client_key(40000).reversed());
  EXPECT_EQ(run(lb, client_key(40000), kAck, 0, 0, PortRole::clients).verdict, Verdict::forward);

  // Anything else from the clients' side: a backend's address (TCP, UDP, ping), the VIP on a port that
  // is no service, and a backend's answer forged there.
  FrameSpec ping;
  ping.key4 = FlowKeyV4::from_host(kClient, kBackend0, 7, 7, ipproto::kIcmp);
  ping.icmp_type = 8;
  const FrameSpec refused[] = {FrameSpec::tcp4(FlowKeyV4::from_host(kClient, kBackend0, 40001, 8443, ipproto::kTcp), kSyn),
                               FrameSpec::udp4(FlowKeyV4::from_host(kClient, kBackend0, 40001, 53, ipproto::kUdp), 8),
                               ping,
                               FrameSpec::tcp4(FlowKeyV4::from_host(kClient, kVip, 40002, 22, ipproto::kTcp), kSyn),
                               FrameSpec::tcp4(syn.key.reversed(), kAck)};
  for (const FrameSpec& spec : refused) EXPECT_EQ(run_spec(lb, spec, 0, PortRole::clients).verdict, Verdict::drop);
  EXPECT_EQ(drop_count(lb, NfDrop::not_to_service), std::size(refused));
  EXPECT_EQ(lb.tracker().size(), 1u);
  EXPECT_EQ(lb.counters().passed, 0u);
}

TEST(LbBoundary, FromTheBackendsPortAndOnAReplayWhatIsNotTheBalancersPasses) {
  Lb lb = make_lb();
  const FrameSpec to_backend = FrameSpec::tcp4(FlowKeyV4::from_host(kClient, kBackend0, 40001, 8443, ipproto::kTcp), kSyn);
  const FrameSpec backend_out = FrameSpec::tcp4(FlowKeyV4::from_host(kBackend0, 0x08080808, 5000, 80, ipproto::kTcp), kSyn);
  EXPECT_EQ(run_spec(lb, to_backend, 0, PortRole::unknown).verdict, Verdict::forward);  // no port: the address rule
  EXPECT_EQ(run_spec(lb, backend_out, 0, PortRole::backends).verdict, Verdict::forward);
  EXPECT_EQ(lb.counters().passed, 2u);
  EXPECT_EQ(drop_count(lb, NfDrop::not_to_service), 0u);
}

// The backend a packet that left the balancer as `to_backend` was sent to.
const Backend& chosen_backend(const Lb& lb, const FlowKeyV4& to_backend) {
  for (const Backend& b : lb.services()[0].backends()) {
    if (b.config.address == to_backend.dst_addr) return b;
  }
  ADD_FAILURE() << "no backend";
  return lb.services()[0].backends()[0];
}

TEST(LbBackendGauges, EachConnectionIsOpeningEstablishedOrClosingAsItsStateMoves) {
  Lb lb = make_lb();
  const FlowKeyV4 client = client_key(40000);
  const Output syn = run(lb, client, kSyn, kNanosPerSecond);
  const Backend& b = chosen_backend(lb, syn.key);
  using Phases = std::array<std::uint64_t, kConnectionPhaseCount>;  // opening, established, closing
  const auto phases = [&] { return b.by_phase; };
  EXPECT_EQ(phases(), (Phases{1, 0, 0}));
  run(lb, syn.key.reversed(), kSyn | kAck, kNanosPerSecond);
  EXPECT_EQ(phases(), (Phases{1, 0, 0}));
  run(lb, client, kAck, kNanosPerSecond);
  EXPECT_EQ(phases(), (Phases{0, 1, 0}));
  run(lb, client, kFin | kAck, kNanosPerSecond);  // the client closes: closing from its FIN on
  EXPECT_EQ(phases(), (Phases{0, 0, 1}));
  run(lb, syn.key.reversed(), kFin | kAck, kNanosPerSecond);
  run(lb, client, kAck, kNanosPerSecond);  // time_wait: still tracked, still closing, not established
  EXPECT_EQ(lb.tracker().connection(lb.tracker().find(client, flow_hash(client)).conn).tcp.state, TcpState::time_wait);
  EXPECT_EQ(phases(), (Phases{0, 0, 1}));
  EXPECT_EQ(b.connections, 1u);
  // A UDP flow has no handshake: established from its first datagram.
  StatefulLbConfig udp_config = lb_config();
  udp_config.services = {web_service(3, ipproto::kUdp)};
  Lb udp_lb(udp_config);
  const Output datagram = run_udp(udp_lb, client_key(5000, ipproto::kUdp), kNanosPerSecond);
  EXPECT_EQ(chosen_backend(udp_lb, datagram.key).in_phase(ConnectionPhase::established), 1u);
  // Their ends: every phase back to zero, with the live count.
  for (Lb* each : {&lb, &udp_lb}) {
    while (each->expire(100 * 24 * 3600 * kNanosPerSecond) != 0) {
    }
    for (const Backend& backend : each->services()[0].backends()) {
      EXPECT_EQ(backend.by_phase, (Phases{0, 0, 0})) << backend.config.name;
      EXPECT_EQ(backend.connections, 0u);
    }
  }
}

// A drained backend with one transfer going on and many connections in time_wait: the gauges tell the
// transfer apart from the ending connections, which the live count alone lumps together.
TEST(LbBackendGauges, ADrainedBackendsClosingConnectionsAreNotCountedAsEstablished) {
  StatefulLbConfig config = lb_config(LbPolicy::round_robin);
  config.services[0].backends.resize(1);
  Lb lb(config);
  const auto handshake = [&](std::uint16_t port) {
    const Output syn = run(lb, client_key(port), kSyn, kNanosPerSecond);
    run(lb, syn.key.reversed(), kSyn | kAck, kNanosPerSecond);
    run(lb, client_key(port), kAck, kNanosPerSecond);
    return syn.key;
  };
  for (std::uint16_t port = 1; port <= 20; ++port) {  // short requests: the server closes first
    const FlowKeyV4 to_backend = handshake(port);
    run(lb, to_backend.reversed(), kFin | kAck, kNanosPerSecond);
    run(lb, client_key(port), kFin | kAck, kNanosPerSecond);
    run(lb, to_backend.reversed(), kAck, kNanosPerSecond);
  }
  handshake(999);  // the long transfer
  lb.apply(web_change(PoolAction::drain, "web-0"));
  const Backend& b = lb.services()[0].backends()[0];
  EXPECT_EQ(b.connections, 21u);
  EXPECT_EQ(b.in_phase(ConnectionPhase::established), 1u);
  EXPECT_EQ(b.in_phase(ConnectionPhase::closing), 20u);
  EXPECT_EQ(b.in_phase(ConnectionPhase::opening), 0u);
}

}  // namespace
}  // namespace flowtrack
