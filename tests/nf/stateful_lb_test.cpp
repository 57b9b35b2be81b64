// The stateful load balancer at the packet level: a TCP connection's handshake, data, FIN and RST
// through it in both directions, with every checksum checked by full recomputation; policies; a lost
// connection's first packet; a full table; and on a campus trace, every connection on one backend
// while backends are added, drained and removed.
#include <gtest/gtest.h>

#include <map>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/io/synthetic.hpp"
#include "nf/lb_rig.hpp"

namespace flowtrack {
namespace {

using namespace lb_rig;

TEST(StatefulLb, ConnectionLifecycleRewritesBothDirections) {
  using namespace tcpflag;
  Lb lb = make_lb();
  const FlowKeyV4 to_vip = FlowKeyV4::from_host(kClient, kVip, 40000, 443, ipproto::kTcp);
  const Output syn = run(lb, to_vip, kSyn);
  ASSERT_EQ(syn.verdict, Verdict::forward);
  EXPECT_EQ(syn.key.src_addr, to_vip.src_addr);
  EXPECT_EQ(syn.key.src_port, to_vip.src_port);
  EXPECT_EQ(syn.key.dst_port, to_network16(8443));
  EXPECT_NE(syn.key.dst_addr, to_vip.dst_addr);
  const FlowKeyV4 from_backend = syn.key.reversed();

  const Output synack = run(lb, from_backend, kSyn | kAck);
  EXPECT_EQ(synack.key, to_vip.reversed());  // the client sees the VIP answer
  for (const std::uint8_t flags : {kAck, std::uint8_t(kAck | kPsh), std::uint8_t(kFin | kAck)}) {
    EXPECT_EQ(run(lb, to_vip, flags, 0, 100).key, syn.key);
  }
  EXPECT_EQ(run(lb, from_backend, kFin | kAck).key, to_vip.reversed());
  EXPECT_EQ(run(lb, to_vip, kAck).key, syn.key);
  const auto conn = lb.tracker().find(to_vip, flow_hash(to_vip));
  ASSERT_TRUE(conn);
  EXPECT_EQ(lb.tracker().connection(conn.conn).tcp.state, TcpState::time_wait);
  EXPECT_EQ(lb.counters().connections_created, 1u);

  // RST on a second connection closes it; its state times out and the backend count returns to 0.
  const FlowKeyV4 other = FlowKeyV4::from_host(kClient, kVip, 40001, 443, ipproto::kTcp);
  run(lb, other, kSyn);
  run(lb, other, kRst);
  lb.expire(11 * kNanosPerSecond);
  EXPECT_FALSE(lb.tracker().find(other, flow_hash(other)));
}

TEST(StatefulLb, TrafficNotForAServicePassesUntouched) {
  Lb lb = make_lb();
  const FlowKeyV4 elsewhere = FlowKeyV4::from_host(kClient, 0x08080808, 40000, 443, ipproto::kTcp);
  const Output out = run(lb, elsewhere, tcpflag::kSyn);
  EXPECT_EQ(out.verdict, Verdict::forward);
  EXPECT_EQ(out.key, elsewhere);
  EXPECT_EQ(lb.counters().passed, 1u);
  EXPECT_EQ(lb.tracker().size(), 0u);
}

TEST(StatefulLb, RoundRobinFollowsWeightsAndLeastConnectionsBalances) {
  StatefulLbConfig config;
  config.services = {web_service()};
  config.services[0].backends[0].weight = 2;  // 2:1:1
  config.policy = LbPolicy::round_robin;
  config.maglev_size = 251;
  Lb lb(config);
  std::map<std::uint32_t, int> per_backend;
  for (std::uint16_t port = 1; port <= 400; ++port) {
    per_backend[run(lb, FlowKeyV4::from_host(kClient, kVip, port, 443, ipproto::kTcp), tcpflag::kSyn).key.dst_addr]++;
  }
  EXPECT_EQ(per_backend[to_network32(0x0a010001)], 200);
  EXPECT_EQ(per_backend[to_network32(0x0a010002)], 100);

  Lb least = make_lb(LbPolicy::least_connections);
  for (std::uint16_t port = 1; port <= 30; ++port) {
    run(least, FlowKeyV4::from_host(kClient, kVip, port, 443, ipproto::kTcp), tcpflag::kSyn);
  }
  for (const Backend& b : least.services()[0].backends()) EXPECT_EQ(b.connections, 10u);
}

TEST(StatefulLb, LostConnectionsFirstPacketTakesTheConsistentChoice) {
  Lb lb = make_lb(LbPolicy::round_robin);
  for (std::uint16_t port = 1; port <= 50; ++port) {
    const FlowKeyV4 key = FlowKeyV4::from_host(kClient, kVip, port, 443, ipproto::kTcp);
    const Output out = run(lb, key, tcpflag::kAck);  // mid-connection: no SYN
    const std::uint32_t expected = lb.services()[0].consistent_choice(flow_hash(key));
    EXPECT_EQ(out.key.dst_addr, lb.services()[0].backends()[expected].config.address);
  }
}

TEST(StatefulLb, FullTableDropsNewConnectionsOrForwardsStatelessly) {
  Lb lb = make_lb(LbPolicy::round_robin, 4);
  for (std::uint16_t port = 1; port <= 4; ++port) {
    ASSERT_EQ(run(lb, FlowKeyV4::from_host(kClient, kVip, port, 443, ipproto::kTcp), tcpflag::kSyn).verdict, Verdict::forward);
  }
  EXPECT_EQ(run(lb, FlowKeyV4::from_host(kClient, kVip, 99, 443, ipproto::kTcp), tcpflag::kSyn).verdict, Verdict::drop);
  EXPECT_EQ(lb.counters().drops[static_cast<std::size_t>(NfDrop::table_full)], 1u);
  // The established ones still work.
  EXPECT_EQ(run(lb, FlowKeyV4::from_host(kClient, kVip, 1, 443, ipproto::kTcp), tcpflag::kAck).verdict, Verdict::forward);

  StatefulLbConfig config;
  config.services = {web_service()};
  config.max_connections = 1;
  config.maglev_size = 251;
  config.stateless_when_full = true;
  Lb fallback(config);
  run(fallback, FlowKeyV4::from_host(kClient, kVip, 1, 443, ipproto::kTcp), tcpflag::kSyn);
  const FlowKeyV4 extra = FlowKeyV4::from_host(kClient, kVip, 2, 443, ipproto::kTcp);
  const Output out = run(fallback, extra, tcpflag::kSyn);
  EXPECT_EQ(out.verdict, Verdict::forward);
  EXPECT_EQ(out.key.dst_addr,
            fallback.services()[0].backends()[fallback.services()[0].consistent_choice(flow_hash(extra))].config.address);
}

TEST(StatefulLb, NoBackendDropsAndCounts) {
  Lb lb = make_lb();
  for (const char* name : {"web-0", "web-1", "web-2"}) {
    lb.apply(web_change(PoolAction::drain, name));
    ASSERT_EQ(web_backend(lb, name).config.weight, 0u);
  }
  EXPECT_EQ(run(lb, FlowKeyV4::from_host(kClient, kVip, 5, 443, ipproto::kTcp), tcpflag::kSyn).verdict, Verdict::drop);
  EXPECT_EQ(lb.counters().drops[static_cast<std::size_t>(NfDrop::no_backend)], 1u);
}

// Campus trace (its servers are the VIPs): every packet of a connection reaches one backend, while the
// pool changes under load: a backend added, one drained, one removed, one reweighted.
TEST(StatefulLb, EveryConnectionStaysOnItsBackendThroughPoolChanges) {
  CampusProfile profile;
  profile.flows = 4'000;
  const PacketStore trace = generate_campus(profile);
  StatefulLbConfig config;
  config.policy = LbPolicy::weighted_random;
  config.maglev_size = 251;
  for (std::uint32_t server = 1; server <= profile.servers; ++server) {
    for (const auto& [port, protocol] : {std::pair{443, ipproto::kTcp}, std::pair{80, ipproto::kTcp}, std::pair{53, ipproto::kUdp},
                                         std::pair{443, ipproto::kUdp}}) {
      ServiceConfig s = web_service();
      s.name = "svc";
      s.vip = to_network32(profile.server_network + server);
      s.port = to_network16(static_cast<std::uint16_t>(port));
      s.protocol = protocol;
      for (auto& b : s.backends) b.port = 0;
      config.services.push_back(s);
    }
  }
  Lb lb(config);
  std::unordered_map<FlowKeyV4, std::uint32_t, FlowKeyHasher> backend_of;  // client-side key -> backend address
  std::size_t moved = 0, checked = 0;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    // Every service is named "svc": a change applies to each.
    if (i == trace.size() / 4) lb.apply({0, "svc", PoolAction::add, {"web-new", to_network32(0x0a0100ff), 0, 3}});
    if (i == trace.size() / 2) {
      lb.apply({0, "svc", PoolAction::drain, {"web-0", 0, 0, 0}});
      lb.apply({0, "svc", PoolAction::remove, {"web-1", 0, 0, 0}});
      lb.apply({0, "svc", PoolAction::weight, {"web-2", 0, 0, 5}});
    }
    std::vector<std::uint8_t> frame(trace[i].bytes.begin(), trace[i].bytes.end());
    NfPacket packet{frame, {}, trace[i].wire_length};
    ASSERT_EQ(parse_frame(frame, trace.link_type(), packet.parsed), ParseStatus::ok);
    const FlowKeyV4 before = packet.parsed.key4;
    if (process_packet(lb, packet, trace[i].timestamp_ns) != Verdict::forward) continue;
    ParsedPacket after;
    ASSERT_EQ(parse_frame(frame, trace.link_type(), after), ParseStatus::ok);
    const bool to_service = before.dst_addr != after.key4.dst_addr;
    if (!to_service) continue;  // replies are checked through their connection's forward packets
    const auto [it, fresh] = backend_of.emplace(before, after.key4.dst_addr);
    ++checked;
    if (!fresh && it->second != after.key4.dst_addr) ++moved;
  }
  EXPECT_GT(checked, 10'000u);
  EXPECT_EQ(moved, 0u);
  std::size_t to_new = 0;
  for (const Service& s : lb.services()) to_new += s.backends().back().total_connections;
  EXPECT_GT(to_new, 0u);  // new connections do follow the new pool
}

}  // namespace
}  // namespace flowtrack
