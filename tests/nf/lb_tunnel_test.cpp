// The load balancers in tunnel mode (nf/tunnel.hpp): the stateful LB, the stateless LB and Concury send
// a tunnel-mode service's packets to the backend in IPIP or GUE with the client's packet unchanged
// inside; the stateful LB tracks such a connection by its one tuple (its answers go to the client
// directly), follows its TCP state from the client's packets alone, and keeps it on its backend across a
// pool change; a service in NAT mode beside it is rewritten as before.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/nf/concury_lb.hpp"
#include "flowtrack/nf/stateless_lb.hpp"
#include "lb_rig.hpp"

namespace flowtrack {
namespace lb_tunnel_test {

using lb_rig::kClient;
using lb_rig::kVip;
constexpr std::uint32_t kTunnelSource = 0x0a010064;

ServiceConfig tunnelled(ForwardMode mode, std::uint8_t protocol = ipproto::kTcp) {
  ServiceConfig s = lb_rig::web_service(3, protocol, 0);
  s.tunnel.mode = mode;
  s.tunnel.source = to_network32(kTunnelSource);
  return s;
}

// A packet as it left a balancer in a tunnel: the outer header's key, and the packet inside.
struct Sent {
  Verdict verdict;
  FlowKeyV4 outer;
  std::vector<std::uint8_t> inner;  // the IP packet inside, empty when the packet left without a tunnel
};

// One frame through `lb`, in a buffer with room for the outer headers; `sent` is the client's IP
// packet, as built, for comparison.
template <NetworkFunction Nf>
Sent through(Nf& lb, const FrameSpec& spec, Nanos now = 0, std::vector<std::uint8_t>* sent = nullptr) {
  std::vector<std::uint8_t> frame = build_frame(spec);
  if (sent != nullptr) sent->assign(frame.begin() + 14, frame.end());
  const std::size_t size = frame.size();
  frame.resize(size + 64);
  NfPacket packet{std::span(frame).first(size), {}, static_cast<std::uint32_t>(size), frame.size()};
  EXPECT_EQ(parse_frame(packet.frame, LinkType::ethernet, packet.parsed), ParseStatus::ok);
  const Verdict verdict = process_packet(lb, packet, now);
  frame.resize(packet.frame.size());
  ParsedPacket outer;
  EXPECT_EQ(parse_frame(frame, LinkType::ethernet, outer), ParseStatus::ok);
  EXPECT_TRUE(testing::ipv4_header_valid(frame, outer));
  const std::span<const std::uint8_t> ip = std::span(frame).subspan(14);
  std::span<const std::uint8_t> inner = ipip_inner(ip);
  if (outer.key4.protocol == ipproto::kUdp && outer.key4.dst_port == to_network16(kDefaultGuePort)) inner = gue_inner(ip.subspan(28));
  return {verdict, outer.key4, {inner.begin(), inner.end()}};
}

TEST(LbTunnel, TheStatefulLbTunnelsAConnectionToOneBackendAndTracksItByItsOneTuple) {
  using namespace tcpflag;
  for (const ForwardMode mode : {ForwardMode::ipip, ForwardMode::gue}) {
    StatefulLbConfig config = lb_rig::lb_config();
    config.services = {tunnelled(mode)};
    lb_rig::Lb lb(config);
    const FlowKeyV4 to_vip = lb_rig::client_key(40000);
    std::vector<std::uint8_t> sent;
    const Sent syn = through(lb, FrameSpec::tcp4(to_vip, kSyn), 0, &sent);
    ASSERT_EQ(syn.verdict, Verdict::forward);
    EXPECT_EQ(syn.inner, sent);  // the client's packet, untouched: the VIP stays its destination
    EXPECT_EQ(syn.outer.src_addr, to_network32(kTunnelSource));
    EXPECT_EQ(syn.outer.protocol, mode == ForwardMode::ipip ? 4 : ipproto::kUdp);
    const std::uint32_t backend = syn.outer.dst_addr;
    for (const std::uint8_t flags : {kAck, std::uint8_t(kAck | kPsh)}) {
      const Sent data = through(lb, FrameSpec::tcp4(to_vip, flags, 200), kNanosPerMilli, &sent);
      EXPECT_EQ(data.outer.dst_addr, backend);
      EXPECT_EQ(data.inner, sent);
      if (mode == ForwardMode::gue) {
        EXPECT_EQ(data.outer.src_port, syn.outer.src_port);  // constant for the flow
      }
    }
    // One connection, one table entry (no reply tuple), established by the client's ACK alone.
    EXPECT_EQ(lb.tracker().size(), 1u);
    EXPECT_EQ(lb.tracker().table().size(), 1u);
    const ConnMatch conn = lb.tracker().find(to_vip, flow_hash(to_vip));
    ASSERT_TRUE(conn);
    EXPECT_EQ(lb.tracker().connection(conn.conn).tcp.state, TcpState::established);
    EXPECT_EQ(lb.tracker().deadline(conn.conn), kNanosPerMilli + config.timeouts.tcp_timeout(TcpState::established));
    // A backend's answer, were it to come this way, is no packet of the balancer's: it passes untouched.
    const FlowKeyV4 answer = to_vip.reversed();
    const Sent passed = through(lb, FrameSpec::tcp4(answer, kAck), 2 * kNanosPerMilli);
    EXPECT_EQ(passed.outer, answer);
    EXPECT_EQ(lb.counters().passed, 1u);
    // The client closes: FIN then the tracker's closing states, on its packets alone.
    through(lb, FrameSpec::tcp4(to_vip, kFin | kAck), 3 * kNanosPerMilli);
    EXPECT_EQ(lb.tracker().connection(conn.conn).tcp.state, TcpState::fin_wait);
    EXPECT_EQ(lb.counters().connections_created, 1u);
  }
}

TEST(LbTunnel, AStatefulUdpFlowInATunnelIsOnItsAnsweredTimeoutFromTheStart) {
  StatefulLbConfig config = lb_rig::lb_config();
  config.services = {tunnelled(ForwardMode::gue, ipproto::kUdp)};
  lb_rig::Lb lb(config);
  const FlowKeyV4 flow = lb_rig::client_key(40000, ipproto::kUdp);
  ASSERT_EQ(through(lb, FrameSpec::udp4(flow, 20)).verdict, Verdict::forward);
  const ConnMatch conn = lb.tracker().find(flow, flow_hash(flow));
  ASSERT_TRUE(conn);
  EXPECT_EQ(lb.tracker().deadline(conn.conn), config.timeouts.udp_replied);
}

TEST(LbTunnel, ATunnelledConnectionStaysOnItsBackendAcrossAPoolChange) {
  StatefulLbConfig config = lb_rig::lb_config(LbPolicy::maglev);
  config.services = {tunnelled(ForwardMode::ipip)};
  lb_rig::Lb lb(config);
  std::vector<std::uint32_t> backends;
  for (std::uint16_t port = 1; port <= 60; ++port) {
    backends.push_back(through(lb, FrameSpec::tcp4(lb_rig::client_key(port), tcpflag::kSyn)).outer.dst_addr);
  }
  PoolChange drain{0, "web", PoolAction::drain, {"web-0"}};
  lb.apply(drain);
  for (std::uint16_t port = 1; port <= 60; ++port) {
    EXPECT_EQ(through(lb, FrameSpec::tcp4(lb_rig::client_key(port), tcpflag::kAck)).outer.dst_addr, backends[port - 1]);
  }
}

TEST(LbTunnel, AFullTableForwardsAFirstPacketThroughTheTunnelWithoutState) {
  StatefulLbConfig config = lb_rig::lb_config(LbPolicy::maglev, 1);
  config.services = {tunnelled(ForwardMode::gue)};
  config.stateless_when_full = true;
  lb_rig::Lb lb(config);
  through(lb, FrameSpec::tcp4(lb_rig::client_key(1), tcpflag::kSyn));
  std::vector<std::uint8_t> sent;
  const FlowKeyV4 second = lb_rig::client_key(2);
  const Sent untracked = through(lb, FrameSpec::tcp4(second, tcpflag::kSyn), 0, &sent);
  EXPECT_EQ(untracked.verdict, Verdict::forward);
  EXPECT_EQ(untracked.inner, sent);
  const Service& svc = lb.services()[0];
  EXPECT_EQ(untracked.outer.dst_addr, svc.backends()[svc.consistent_choice(flow_hash(second))].config.address);
  EXPECT_EQ(lb.tracker().size(), 1u);
}

TEST(LbTunnel, ANatModeServiceBesideATunnelIsRewrittenAsBefore) {
  StatefulLbConfig config = lb_rig::lb_config();
  ServiceConfig nat = lb_rig::web_service();
  nat.name = "nat";
  nat.port = to_network16(80);
  config.services = {tunnelled(ForwardMode::ipip), nat};
  lb_rig::Lb lb(config);
  const FlowKeyV4 to_nat = FlowKeyV4::from_host(kClient, kVip, 40000, 80, ipproto::kTcp);
  const Sent rewritten = through(lb, FrameSpec::tcp4(to_nat, tcpflag::kSyn));
  EXPECT_TRUE(rewritten.inner.empty());
  EXPECT_EQ(rewritten.outer.dst_port, to_network16(8443));
  EXPECT_EQ(lb.tracker().table().size(), 2u);  // both tuples
}

TEST(LbTunnel, TheStatelessLbTunnelsToTheHashedBackend) {
  StatelessLbConfig config{{tunnelled(ForwardMode::gue)}, StatelessSelection::maglev, 251};
  StatelessLb lb(config);
  std::vector<std::uint8_t> sent;
  const FlowKeyV4 key = lb_rig::client_key(40000);
  const Sent out = through(lb, FrameSpec::tcp4(key, tcpflag::kAck, 100), 0, &sent);
  ASSERT_EQ(out.verdict, Verdict::forward);
  EXPECT_EQ(out.inner, sent);
  const Service& svc = lb.services()[0];
  EXPECT_EQ(out.outer.dst_addr, svc.backends()[svc.consistent_choice(flow_hash(key))].config.address);
  EXPECT_EQ(out.outer.src_port, gue_source_port(flow_hash(key)));
}

TEST(LbTunnel, ConcuryTunnelsAConnectionToOneBackend) {
  StatefulLbConfig config = lb_rig::lb_config();
  config.services = {tunnelled(ForwardMode::ipip)};
  ConcuryLb lb(config);
  for (std::uint16_t port = 1; port <= 50; ++port) {
    const FlowKeyV4 key = lb_rig::client_key(port);
    std::vector<std::uint8_t> sent;
    const Sent syn = through(lb, FrameSpec::tcp4(key, tcpflag::kSyn), 0, &sent);
    EXPECT_EQ(syn.inner, sent);
    EXPECT_EQ(through(lb, FrameSpec::tcp4(key, tcpflag::kAck, 10)).outer.dst_addr, syn.outer.dst_addr);
    const auto& pool = lb.services()[0].backends();
    EXPECT_TRUE(std::ranges::any_of(pool, [&](const Backend& b) { return b.config.address == syn.outer.dst_addr; }));
  }
}

TEST(LbTunnel, TooBigPacketsAreAnsweredByEveryBalancer) {
  StatefulLbConfig config = lb_rig::lb_config();
  config.services = {tunnelled(ForwardMode::ipip)};
  config.services[0].tunnel.mtu = 600;
  lb_rig::Lb lb(config);
  FrameSpec big = FrameSpec::tcp4(lb_rig::client_key(1), tcpflag::kSyn, 600);
  EXPECT_EQ(through(lb, big).verdict, Verdict::drop);  // no DF: dropped, never fragmented
  EXPECT_EQ(lb.counters().drops[static_cast<std::size_t>(NfDrop::too_big)], 1u);
  StatelessLb slb({config.services, StatelessSelection::maglev, 251});
  EXPECT_EQ(through(slb, big).verdict, Verdict::drop);
  EXPECT_EQ(slb.counters().drops[static_cast<std::size_t>(NfDrop::too_big)], 1u);
  // Neither counted it as traffic to a backend: it never went out.
  for (const auto* pool : {&lb.services()[0].backends(), &slb.services()[0].backends()}) {
    for (const Backend& b : *pool) EXPECT_EQ(b.packets, 0u) << b.config.name;
  }
}

}  // namespace lb_tunnel_test
}  // namespace flowtrack
