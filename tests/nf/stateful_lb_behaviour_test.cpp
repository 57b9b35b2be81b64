// The stateful load balancer's behaviours, one named test each, at the packet level:
// checksums in both directions, the non-SYN first packet policy, Maglev's table through the balancer,
// backend changes under load (a multiplied campus trace), the scheduled pool changes, and a full table.
#include <gtest/gtest.h>

#include <map>
#include <unordered_map>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/io/synthetic.hpp"
#include "flowtrack/io/trace_multiplier.hpp"
#include "flowtrack/nf/nf_config.hpp"
#include "flowtrack/packet/rewrite.hpp"
#include "flowtrack/util/random.hpp"
#include "nf/lb_rig.hpp"
#include "support/temp_config.hpp"

namespace flowtrack {
namespace {

using namespace lb_rig;
using namespace tcpflag;

std::uint64_t drops(const Lb& lb, NfDrop reason) { return lb.counters().drops[static_cast<std::size_t>(reason)]; }

// The address of the backend Maglev gives `key` in service 0.
std::uint32_t consistent_address(const Lb& lb, const FlowKeyV4& key) {
  const Service& s = lb.services()[0];
  return s.backends()[s.consistent_choice(flow_hash(key))].config.address;
}

std::string backend_name(const Lb& lb, std::uint32_t address) {
  for (const Backend& b : lb.services()[0].backends()) {
    if (b.config.address == address) return b.config.name;
  }
  return "(no backend)";
}

// ---- 1. Checksums ---------------------------------------------------------------------------------

// Every combination of protocol, backend port rewrite and payload length (odd ones too: the checksum's
// last byte is padded), in both directions; run_spec checks each frame that leaves against the full
// recomputation, and the reverse path must give the client back the VIP and the service port.
TEST(LbChecksums, FixedForTcpAndUdpBothDirectionsWithAndWithoutPortRewrite) {
  for (const std::uint8_t protocol : {ipproto::kTcp, ipproto::kUdp}) {
    for (const std::uint16_t backend_port : {std::uint16_t{8443}, std::uint16_t{0}}) {
      StatefulLbConfig config = lb_config();
      config.services = {web_service(3, protocol, backend_port)};
      Lb lb(config);
      for (const std::uint16_t payload : {0, 1, 7, 100, 1001}) {
        SCOPED_TRACE(::testing::Message() << int(protocol) << " backend port " << backend_port << " payload " << payload);
        const FlowKeyV4 key = client_key(static_cast<std::uint16_t>(30000 + payload), protocol);
        FrameSpec spec = protocol == ipproto::kTcp ? FrameSpec::tcp4(key, kSyn, payload) : FrameSpec::udp4(key, payload);
        spec.payload_fill = static_cast<std::uint8_t>(0xa5 + payload);
        const Output forward = run_spec(lb, spec);
        ASSERT_EQ(forward.verdict, Verdict::forward);
        EXPECT_EQ(forward.key.dst_port, backend_port != 0 ? to_network16(backend_port) : key.dst_port);
        EXPECT_EQ(backend_name(lb, forward.key.dst_addr).rfind("web-", 0), 0u);
        EXPECT_EQ(forward.key.src_addr, key.src_addr);
        EXPECT_EQ(forward.key.src_port, key.src_port);

        FrameSpec reply = protocol == ipproto::kTcp ? FrameSpec::tcp4(forward.key.reversed(), kSyn | kAck, payload)
                                                    : FrameSpec::udp4(forward.key.reversed(), payload);
        reply.payload_fill = 0x5a;
        const Output back = run_spec(lb, reply);
        ASSERT_EQ(back.verdict, Verdict::forward);
        EXPECT_EQ(back.key, key.reversed());  // VIP and service port restored
      }
    }
  }
}

// Random clients, ports and payload bytes: the incremental updates meet every carry case.
TEST(LbChecksums, RandomConnectionsMatchFullRecomputation) {
  Lb lb = make_lb(LbPolicy::maglev, 8192);
  Random rng(42);
  for (int i = 0; i < 1000; ++i) {
    const FlowKeyV4 key = FlowKeyV4::from_host(static_cast<std::uint32_t>(rng.next()), kVip,
                                               static_cast<std::uint16_t>(rng.below(65535) + 1), 443, ipproto::kTcp);
    FrameSpec spec = FrameSpec::tcp4(key, kSyn, static_cast<std::uint16_t>(rng.below(300)));
    spec.payload_fill = static_cast<std::uint8_t>(rng.next());
    spec.tcp_seq = static_cast<std::uint32_t>(rng.next());
    const Output forward = run_spec(lb, spec);
    ASSERT_EQ(forward.verdict, Verdict::forward);
    EXPECT_EQ(run(lb, forward.key.reversed(), kSyn | kAck, 0, 3).key, key.reversed());
  }
  EXPECT_EQ(lb.counters().connections_created, 1000u);
}

// A UDP datagram without a checksum (0: none, IPv4 allows it) keeps none after the rewrite.
TEST(LbChecksums, AbsentUdpChecksumStaysAbsent) {
  StatefulLbConfig config = lb_config();
  config.services = {web_service(3, ipproto::kUdp)};
  Lb lb(config);
  std::vector<std::uint8_t> frame = build_frame(FrameSpec::udp4(client_key(5000, ipproto::kUdp), 20));
  NfPacket packet{frame, {}, static_cast<std::uint32_t>(frame.size())};
  ASSERT_EQ(parse_frame(frame, LinkType::ethernet, packet.parsed), ParseStatus::ok);
  store_be16(frame.data() + packet.parsed.l4_offset + 6, 0);
  ASSERT_EQ(process_packet(lb, packet, 0), Verdict::forward);
  ParsedPacket after;
  ASSERT_EQ(parse_frame(frame, LinkType::ethernet, after), ParseStatus::ok);
  EXPECT_EQ(load_be16(frame.data() + after.l4_offset + 6), 0);
  EXPECT_TRUE(testing::ipv4_header_valid(frame, after));
  EXPECT_EQ(after.key4.dst_port, to_network16(8443));
}

// ---- 2. A first packet without SYN -------------------------------------------------------------------

Lb lb_with(NonSynFirst non_syn_first, LbPolicy policy = LbPolicy::round_robin) {
  StatefulLbConfig config = lb_config(policy);
  config.non_syn_first = non_syn_first;
  return Lb(config);
}

TEST(LbNonSynFirst, ConsistentByDefaultGivesTheMaglevChoice) {
  EXPECT_EQ(StatefulLbConfig{}.non_syn_first, NonSynFirst::consistent);
  Lb lb = lb_with(NonSynFirst::consistent);
  for (std::uint16_t port = 1; port <= 60; ++port) {
    const FlowKeyV4 key = client_key(port);
    const Output out = run(lb, key, kAck, 0, 10);
    ASSERT_EQ(out.verdict, Verdict::forward);
    EXPECT_EQ(out.key.dst_addr, consistent_address(lb, key));
    EXPECT_EQ(run(lb, out.key.reversed(), kAck).key, key.reversed());  // tracked from then on
  }
  EXPECT_EQ(lb.counters().connections_created, 60u);
}

TEST(LbNonSynFirst, PolicyTreatsItLikeASyn) {
  Lb lb = lb_with(NonSynFirst::policy);  // round robin: exactly 20 each, whatever Maglev would say
  std::map<std::string, int> per_backend;
  for (std::uint16_t port = 1; port <= 60; ++port) per_backend[backend_name(lb, run(lb, client_key(port), kAck).key.dst_addr)]++;
  EXPECT_EQ(per_backend, (std::map<std::string, int>{{"web-0", 20}, {"web-1", 20}, {"web-2", 20}}));
}

TEST(LbNonSynFirst, DropCountsItAndTracksNothing) {
  Lb lb = lb_with(NonSynFirst::drop);
  for (const std::uint8_t flags : {kAck, std::uint8_t(kAck | kPsh), std::uint8_t(kFin | kAck), kRst}) {
    EXPECT_EQ(run(lb, client_key(7), flags).verdict, Verdict::drop);
  }
  EXPECT_EQ(drops(lb, NfDrop::non_syn_first), 4u);
  EXPECT_EQ(lb.tracker().size(), 0u);
  EXPECT_EQ(nf_drop_name(NfDrop::non_syn_first), "non_syn_first");
  // A SYN opens the connection, after which its packets without SYN are its own.
  ASSERT_EQ(run(lb, client_key(7), kSyn).verdict, Verdict::forward);
  EXPECT_EQ(run(lb, client_key(7), kAck).verdict, Verdict::forward);
  EXPECT_EQ(drops(lb, NfDrop::non_syn_first), 4u);
}

// UDP has no SYN: every first UDP packet is a new connection, given by the policy (never dropped or
// sent to the consistent choice for want of a SYN).
TEST(LbNonSynFirst, UdpHasNoSynSoEveryFirstPacketFollowsThePolicy) {
  for (const NonSynFirst mode : {NonSynFirst::consistent, NonSynFirst::policy, NonSynFirst::drop}) {
    StatefulLbConfig config = lb_config(LbPolicy::round_robin);
    config.services = {web_service(3, ipproto::kUdp)};
    config.non_syn_first = mode;
    Lb lb(config);
    std::map<std::string, int> per_backend;
    for (std::uint16_t port = 1; port <= 30; ++port) {
      const Output out = run_udp(lb, client_key(port, ipproto::kUdp), 0, 8);
      ASSERT_EQ(out.verdict, Verdict::forward);
      per_backend[backend_name(lb, out.key.dst_addr)]++;
    }
    EXPECT_EQ(per_backend, (std::map<std::string, int>{{"web-0", 10}, {"web-1", 10}, {"web-2", 10}}));
    EXPECT_EQ(drops(lb, NfDrop::non_syn_first), 0u);
  }
}

// ---- 3. Maglev through the balancer -------------------------------------------------------------------

TEST(LbMaglev, DefaultSizeIsPrimeAndOverHundredTimesTheBackends) {
  EXPECT_EQ(StatefulLbConfig{}.maglev_size, 65537u);
  EXPECT_TRUE(is_prime(MaglevTable::kDefaultSize));
  EXPECT_EQ(max_backends_for(65537), 655u);
  EXPECT_GT(65537u, 100 * max_backends_for(65537));
}

TEST(LbMaglev, EmptyPoolYieldsNoBackend) {
  StatefulLbConfig config = lb_config(LbPolicy::maglev);
  config.services[0].backends.clear();
  Lb empty(config);
  EXPECT_EQ(run(empty, client_key(1), kSyn).verdict, Verdict::drop);
  EXPECT_EQ(run(empty, client_key(2), kAck).verdict, Verdict::drop);  // the consistent choice too
  EXPECT_EQ(drops(empty, NfDrop::no_backend), 2u);
  EXPECT_EQ(empty.tracker().size(), 0u);

  Lb removed = make_lb(LbPolicy::maglev);
  for (const char* name : {"web-0", "web-1", "web-2"}) {
    removed.apply(web_change(PoolAction::remove, name));
    ASSERT_TRUE(web_backend(removed, name).removed);
  }
  EXPECT_EQ(removed.services()[0].consistent_choice(12345), Service::kNoBackend);
  EXPECT_EQ(run(removed, client_key(1), kSyn).verdict, Verdict::drop);
  EXPECT_EQ(drops(removed, NfDrop::no_backend), 1u);
}

TEST(LbMaglev, OneBackendFillsTheTable) {
  StatefulLbConfig config = lb_config(LbPolicy::maglev);
  config.services = {web_service(1)};
  Lb lb(config);
  for (std::uint32_t h = 0; h < config.maglev_size; ++h) ASSERT_EQ(lb.services()[0].consistent_choice(h), 0u);
  for (std::uint16_t port = 1; port <= 100; ++port) EXPECT_EQ(backend_name(lb, run(lb, client_key(port), kSyn).key.dst_addr), "web-0");
}

// Two balancers built apart from the same configuration agree on every flow, and no entry is a hole.
TEST(LbMaglev, NoHolesAndDeterministic) {
  StatefulLbConfig config = lb_config(LbPolicy::maglev, 4096);
  config.maglev_size = 1009;
  config.services = {web_service(7)};
  for (std::size_t i = 0; i < 7; ++i) config.services[0].backends[i].weight = static_cast<std::uint32_t>(1 + i * i);
  Lb a(config), b(config);
  for (std::uint32_t h = 0; h < config.maglev_size; ++h) {
    ASSERT_NE(a.services()[0].consistent_choice(h), Service::kNoBackend) << "hole at " << h;
    ASSERT_EQ(a.services()[0].consistent_choice(h), b.services()[0].consistent_choice(h));
  }
  for (std::uint16_t port = 1; port <= 3000; ++port) {
    ASSERT_EQ(run(a, client_key(port), kSyn).key, run(b, client_key(port), kSyn).key);
  }
}

// The tolerance maglev.hpp states: within N + 1 entries of M * w / W, with very uneven weights and
// weights above the table size (which must not let the first heavy backend take the whole table).
TEST(LbMaglev, UnevenWeightsMetWithinTheStatedTolerance) {
  const std::vector<std::vector<std::uint32_t>> cases = {
      {1, 3, 10, 50, 200}, {1, 1, 1, 97}, {70000, 70000, 1}, {1'000'000, 999'999, 3}, {5, 0, 5}};
  for (const auto& weights : cases) {
    ServiceConfig s = web_service(weights.size());
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
      s.backends[i].weight = weights[i];
      total += weights[i];
    }
    const Service service(s, MaglevTable::kDefaultSize);
    std::vector<std::size_t> owned(weights.size(), 0);
    for (std::uint32_t h = 0; h < MaglevTable::kDefaultSize; ++h) owned.at(service.consistent_choice(h))++;
    for (std::size_t i = 0; i < weights.size(); ++i) {
      const double exact = 65537.0 * weights[i] / static_cast<double>(total);
      EXPECT_NEAR(static_cast<double>(owned[i]), exact, static_cast<double>(weights.size() + 1))
          << "backend " << i << " of weights case starting " << weights[0];
    }
  }
}

// Table level: only about 1/N of the entries change owner, those of the removed backend included.
TEST(LbMaglev, RemovingOneOfNRemapsAboutOneNth) {
  constexpr std::size_t kN = 10;
  const Service before(web_service(kN), 65537);
  Service after = before;
  ASSERT_TRUE(after.remove_backend("web-3"));
  std::size_t changed = 0, orphaned = 0;
  for (std::uint32_t h = 0; h < 65537; ++h) {
    const std::uint32_t old_owner = before.consistent_choice(h), new_owner = after.consistent_choice(h);
    ASSERT_NE(new_owner, 3u);
    if (old_owner != new_owner) ++changed;
    if (old_owner == 3) ++orphaned;
  }
  EXPECT_NEAR(static_cast<double>(orphaned) / 65537, 1.0 / kN, 0.001);
  EXPECT_GE(changed, orphaned);
  EXPECT_LE(static_cast<double>(changed) / 65537, 1.0 / kN + 0.03);  // stated: about 1/N, at most 3 points more
}

// Through the balancer: connections opened before the removal, those on the removed backend too, keep
// their backend; a new connection moves only if its Maglev entry changed owner.
TEST(LbMaglev, RemovingOneOfNMovesNoConnectionThatHasState) {
  StatefulLbConfig config = lb_config(LbPolicy::maglev, 8192);
  config.maglev_size = 1009;  // > 100 x 10
  config.services = {web_service(10)};
  Lb lb(config);
  std::vector<FlowKeyV4> keys;
  std::vector<std::uint32_t> backend_of;
  for (std::uint16_t port = 1; port <= 3000; ++port) {
    keys.push_back(client_key(port));
    backend_of.push_back(run(lb, keys.back(), kSyn).key.dst_addr);
  }
  // Where new connections would go before the removal.
  std::vector<std::uint32_t> before;
  for (std::uint16_t port = 10001; port <= 13000; ++port) before.push_back(consistent_address(lb, client_key(port)));
  lb.apply(web_change(PoolAction::remove, "web-3"));
  ASSERT_TRUE(web_backend(lb, "web-3").removed);
  std::size_t on_removed = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const Output out = run(lb, keys[i], kAck, 0, 50);
    ASSERT_EQ(out.key.dst_addr, backend_of[i]) << "connection " << i << " moved";
    EXPECT_EQ(run(lb, out.key.reversed(), kAck).key, keys[i].reversed());
    on_removed += backend_name(lb, backend_of[i]) == "web-3";
  }
  EXPECT_GT(on_removed, 200u);
  EXPECT_EQ(lb.services()[0].backends()[3].connections, on_removed);
  std::size_t moved = 0;
  for (std::uint16_t port = 10001; port <= 13000; ++port) {
    const std::uint32_t now = run(lb, client_key(port), kSyn).key.dst_addr;
    EXPECT_NE(backend_name(lb, now), "web-3");
    moved += now != before[port - 10001];
  }
  EXPECT_LE(static_cast<double>(moved) / 3000, 1.0 / 10 + 0.05);
}

// ---- 4. Backend changes under load ---------------------------------------------------------------

// Backends outside the campus trace's addresses (clients 10.w.0.0/16 after multiplication).
BackendConfig backend(const std::string& name, std::uint32_t host, std::uint32_t weight = 1) {
  return {name, to_network32(0xac100000 + host), 0, weight};  // 172.16.0.host, the client's port
}

// The campus servers' services: TCP 443 and 80 named "web", UDP 53 and 443 named "udp", each with
// backends b-0..b-3.
std::vector<ServiceConfig> campus_services(const CampusProfile& profile) {
  std::vector<ServiceConfig> services;
  for (std::uint32_t server = 1; server <= profile.servers; ++server) {
    for (const auto& [port, protocol] : {std::pair{443, ipproto::kTcp}, std::pair{80, ipproto::kTcp},
                                         std::pair{53, ipproto::kUdp}, std::pair{443, ipproto::kUdp}}) {
      ServiceConfig s{protocol == ipproto::kTcp ? "web" : "udp", to_network32(profile.server_network + server),
                      to_network16(static_cast<std::uint16_t>(port)), protocol, {}};
      for (std::uint32_t b = 0; b < 4; ++b) s.backends.push_back(backend("b-" + std::to_string(b), b + 1));
      services.push_back(s);
    }
  }
  return services;
}

// A campus trace multiplied into 4 shifted windows, so new connections arrive all along it, through a
// balancer whose pool changes four times (add, drain, remove, reweight, by the schedule): no forward
// packet of any connection reaches another backend than its first one, every reply leaves with its
// VIP, drained and removed backends take no new connection but keep theirs, and once every
// connection has timed out every backend's live count is back to 0.
TEST(LbPoolChangesUnderLoad, NoConnectionMovesOnAMultipliedCampusTrace) {
  CampusProfile profile;
  profile.flows = 3'000;
  const PacketStore trace = multiply_trace(generate_campus(profile), {.windows = 4});
  const Nanos t0 = trace[0].timestamp_ns;
  const Nanos duration = trace[trace.size() - 1].timestamp_ns - t0;
  StatefulLbConfig config;
  config.policy = LbPolicy::weighted_random;
  config.maglev_size = 1009;
  config.services = campus_services(profile);
  Lb lb(config);
  Scheduled scheduled(lb,
                      {
                          {4 * duration / 5, "web", PoolAction::weight, backend("b-2", 3, 5)},  // given out of order: sorted
                          {1 * duration / 5, "web", PoolAction::add, backend("b-new", 99, 3)},
                          {2 * duration / 5, "web", PoolAction::drain, backend("b-0", 1)},
                          {3 * duration / 5, "web", PoolAction::remove, backend("b-1", 2)},
                      },
                      config);
  const std::uint32_t b0 = backend("b-0", 1).address, b1 = backend("b-1", 2).address, added = backend("b-new", 99).address;

  std::unordered_map<FlowKeyV4, std::uint32_t, FlowKeyHasher> backend_of;  // client-side key -> backend
  std::size_t moved = 0, checked = 0, replies = 0, leaked = 0, new_after_drain = 0, new_after_remove = 0,
              kept_after_remove = 0, new_to_added = 0, full_segments = 0;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const Nanos at = trace[i].timestamp_ns - t0;
    std::vector<std::uint8_t> frame(trace[i].bytes.begin(), trace[i].bytes.end());
    NfPacket packet{frame, {}, trace[i].wire_length};
    ASSERT_EQ(parse_frame(frame, trace.link_type(), packet.parsed), ParseStatus::ok);
    const FlowKeyV4 before = packet.parsed.key4;
    // The trace's answers come from the servers: readdress each to come from the backend its
    // connection was given (the backends keep the client's port), as the backend would send it.
    const bool reply = packet.parsed.ip_version == 4 && (to_host32(before.src_addr) >> 16) == 0xc612;
    const auto known = reply ? backend_of.find(before.reversed()) : backend_of.end();
    if (known != backend_of.end()) {
      rewrite_ipv4_src(frame, packet.parsed, known->second);
      ASSERT_EQ(parse_frame(frame, trace.link_type(), packet.parsed), ParseStatus::ok);
    }
    const std::uint64_t created = lb.counters().connections_created;
    ASSERT_EQ(process_packet(scheduled, packet, trace[i].timestamp_ns), Verdict::forward);
    ParsedPacket after;
    ASSERT_EQ(parse_frame(frame, trace.link_type(), after), ParseStatus::ok);
    if (packet.parsed.ip_version != 4 || !packet.parsed.has_ports) continue;
    // The windows repeat the trace's tuples: a SYN on a tuple whose connection ended opens a new one.
    if (!reply && lb.counters().connections_created != created) backend_of.erase(before);
    ASSERT_TRUE(testing::ipv4_header_valid(frame, after));
    // The trace is captured with a 128-byte snap length: a cut segment's checksum cannot be recomputed.
    if (frame.size() == trace[i].wire_length) {
      ASSERT_TRUE(testing::transport_valid(frame, after)) << i;
      ++full_segments;
    }
    if (reply) {  // must leave as the server's answer: VIP restored
      replies += known != backend_of.end();
      leaked += after.key4 != before;
      continue;
    }
    const std::uint32_t to = after.key4.dst_addr;
    const auto [it, fresh] = backend_of.emplace(before, to);
    ++checked;
    if (!fresh) {
      moved += it->second != to;
      kept_after_remove += at >= 3 * duration / 5 && to == b1;
      continue;
    }
    if (before.protocol != ipproto::kTcp) continue;
    new_after_drain += at >= 2 * duration / 5 && to == b0;
    new_after_remove += at >= 3 * duration / 5 && to == b1;
    new_to_added += to == added;
  }
  EXPECT_GT(checked, 50'000u);
  EXPECT_GT(full_segments, 50'000u);
  EXPECT_EQ(moved, 0u);
  EXPECT_GT(replies, 50'000u);
  EXPECT_EQ(leaked, 0u);
  EXPECT_EQ(new_after_drain, 0u);
  EXPECT_EQ(new_after_remove, 0u);
  EXPECT_GT(kept_after_remove, 0u);  // the removed backend's connections kept going to it
  EXPECT_GT(new_to_added, 100u);

  std::uint64_t total = 0;
  for (const Service& s : lb.services()) {
    for (const Backend& b : s.backends()) total += b.total_connections;
  }
  EXPECT_EQ(total, lb.counters().connections_created);
  const Nanos end = trace[trace.size() - 1].timestamp_ns + 10 * 24 * 3600 * kNanosPerSecond;
  while (lb.expire(end) != 0) {
  }
  EXPECT_EQ(lb.tracker().size(), 0u);
  for (const Service& s : lb.services()) {
    for (const Backend& b : s.backends()) EXPECT_EQ(b.connections, 0u) << b.config.name;
  }
}

// After a drain, a removal, an addition and a weight change, new connections split as the new weights
// say: 3:1:4 over web-1, web-3 and web-new. Tolerance: 2 percentage points of the 8000 connections
// (over 3.5 standard deviations of a binomial share; round robin is exact). Deterministic seed.
TEST(LbPoolChangesUnderLoad, NewConnectionsFollowTheNewWeights) {
  for (const LbPolicy policy : {LbPolicy::weighted_random, LbPolicy::maglev, LbPolicy::round_robin}) {
    SCOPED_TRACE(lb_policy_name(policy));
    StatefulLbConfig config = lb_config(policy, 20'000);
    config.maglev_size = 65537;
    config.services = {web_service(4)};
    config.seed = 7;
    Lb lb(config);
    Random rng(11);
    auto open = [&](int n) {
      std::map<std::string, double> share;
      for (int i = 0; i < n; ++i) {
        const FlowKeyV4 key = FlowKeyV4::from_host(0x0a000000 | static_cast<std::uint32_t>(rng.below(1 << 16)), kVip,
                                                   static_cast<std::uint16_t>(1024 + rng.below(60000)), 443, ipproto::kTcp);
        const Output out = run(lb, key, kSyn);
        if (out.verdict == Verdict::forward) share[backend_name(lb, out.key.dst_addr)] += 1.0 / n;
      }
      return share;
    };
    open(2000);  // load before the change
    lb.apply(web_change(PoolAction::drain, "web-0"));
    lb.apply(web_change(PoolAction::weight, "web-1", 3));
    lb.apply(web_change(PoolAction::remove, "web-2"));
    lb.apply({0, "web", PoolAction::add, {"web-new", to_network32(0x0a0100ff), to_network16(8443), 4}});
    ASSERT_EQ(web_backend(lb, "web-0").config.weight, 0u);
    ASSERT_EQ(web_backend(lb, "web-1").config.weight, 3u);
    ASSERT_TRUE(web_backend(lb, "web-2").removed);
    ASSERT_EQ(web_backend(lb, "web-new").config.weight, 4u);
    const auto share = open(8000);
    EXPECT_FALSE(share.contains("web-0"));
    EXPECT_FALSE(share.contains("web-2"));
    EXPECT_NEAR(share.at("web-1"), 3.0 / 8, 0.02);
    EXPECT_NEAR(share.at("web-3"), 1.0 / 8, 0.02);
    EXPECT_NEAR(share.at("web-new"), 4.0 / 8, 0.02);
  }
}

// Live counts rise and fall with the connections; a removed backend keeps its connections (and its
// count) until they end.
TEST(LbBackendCounters, LiveCountsReturnToZeroAndRemovedBackendsKeepTheirConnections) {
  Lb lb = make_lb(LbPolicy::round_robin);
  std::vector<Output> opened;
  for (std::uint16_t port = 1; port <= 30; ++port) opened.push_back(run(lb, client_key(port), kSyn, kNanosPerSecond));
  for (const Backend& b : lb.services()[0].backends()) EXPECT_EQ(b.connections, 10u);
  lb.apply(web_change(PoolAction::remove, "web-1"));
  ASSERT_TRUE(web_backend(lb, "web-1").removed);
  const Backend& removed = lb.services()[0].backends()[1];
  EXPECT_EQ(removed.connections, 10u);
  for (std::uint16_t port = 1; port <= 30; ++port) {
    EXPECT_EQ(run(lb, client_key(port), kAck, 2 * kNanosPerSecond).key, opened[port - 1].key);
    EXPECT_EQ(run(lb, opened[port - 1].key.reversed(), kSyn | kAck, 2 * kNanosPerSecond).key, client_key(port).reversed());
  }
  for (std::uint16_t port = 31; port <= 60; ++port) EXPECT_NE(backend_name(lb, run(lb, client_key(port), kSyn).key.dst_addr), "web-1");
  EXPECT_EQ(removed.connections, 10u);
  // web-1's connections end (RST): after their timeout its count is 0, the others' are not.
  for (std::uint16_t port = 1; port <= 30; ++port) {
    if (opened[port - 1].key.dst_addr == removed.config.address) run(lb, client_key(port), kRst, 3 * kNanosPerSecond);
  }
  lb.expire(30 * kNanosPerSecond);
  EXPECT_EQ(removed.connections, 0u);
  EXPECT_EQ(removed.total_connections, 10u);
  EXPECT_GT(lb.services()[0].backends()[0].connections, 0u);
  while (lb.expire(100 * 24 * 3600 * kNanosPerSecond) != 0) {
  }
  for (const Backend& b : lb.services()[0].backends()) EXPECT_EQ(b.connections, 0u) << b.config.name;
  EXPECT_EQ(lb.counters().connections_expired, lb.counters().connections_created);
}

// A client that reuses a port opens a new connection once the old one has ended: its SYN on the tuple
// of a connection in time_wait (both FINs acknowledged) or closed by a RST gets the policy's backend,
// so a drained backend gets none; a retransmitted SYN of a live connection keeps its backend.
TEST(LbPortReuse, ASynOnAnEndedConnectionsTupleOpensANewOneByThePolicy) {
  for (const bool by_rst : {false, true}) {
    Lb lb = make_lb(LbPolicy::round_robin);
    const FlowKeyV4 key = client_key(40000);
    const Output first = run(lb, key, kSyn, kNanosPerSecond);
    const std::string old_backend = backend_name(lb, first.key.dst_addr);
    EXPECT_EQ(run(lb, key, kSyn, kNanosPerSecond).key, first.key) << "a retransmitted SYN";
    run(lb, first.key.reversed(), kSyn | kAck, kNanosPerSecond);
    run(lb, key, kAck, kNanosPerSecond);
    if (by_rst) {
      run(lb, key, kRst, kNanosPerSecond);
    } else {  // the server closes first, as nginx does on "Connection: close"
      run(lb, first.key.reversed(), kFin | kAck, kNanosPerSecond);
      run(lb, key, kAck, kNanosPerSecond);
      run(lb, key, kFin | kAck, kNanosPerSecond);
      run(lb, first.key.reversed(), kAck, kNanosPerSecond);
    }
    lb.apply(web_change(PoolAction::drain, old_backend));
    ASSERT_EQ(web_backend(lb, old_backend).config.weight, 0u);
    const Output again = run(lb, key, kSyn, 2 * kNanosPerSecond);
    EXPECT_NE(backend_name(lb, again.key.dst_addr), old_backend) << (by_rst ? "after a RST" : "in time_wait");
    EXPECT_EQ(run(lb, key, kAck, 2 * kNanosPerSecond).key, again.key) << "the new connection keeps its backend";
    EXPECT_EQ(lb.counters().connections_created, 2u);
    EXPECT_EQ(lb.counters().connections_expired, 1u);
    EXPECT_EQ(lb.tracker().size(), 1u);
    for (const Backend& b : lb.services()[0].backends()) {
      EXPECT_EQ(b.connections, b.config.address == again.key.dst_addr ? 1u : 0u) << b.config.name;
    }
  }
}

// ---- 5. Scheduled pool changes ---------------------------------------------------------------------

// The schedule counts from the first packet (here at 5 s): nothing changes before a change's time,
// the change applies to the first packet at or after it, changes given out of order apply in time order.
TEST(LbChangeSchedule, AppliedWhenThePacketClockPassesEachChange) {
  StatefulLbConfig config = lb_config(LbPolicy::round_robin);
  config.maglev_size = 401;  // > 100 x 4 backends
  Lb balancer(config);
  Scheduled lb(balancer,
               {
                   {2 * kNanosPerSecond, "web", PoolAction::add, {"web-new", to_network32(0x0a0100ff), to_network16(8443), 1}},
                   {1 * kNanosPerSecond, "web", PoolAction::remove, {"web-0", 0, 0, 0}},
               },
               config);
  const Nanos t0 = 5 * kNanosPerSecond;
  std::map<std::string, int> before, after_remove, after_add;
  const Output first = run(lb, client_key(1), kSyn, t0);
  before[backend_name(balancer, first.key.dst_addr)]++;
  for (std::uint16_t port = 2; port <= 3; ++port) before[backend_name(balancer, run(lb, client_key(port), kSyn, t0 + kNanosPerSecond - 1).key.dst_addr)]++;
  EXPECT_EQ(before, (std::map<std::string, int>{{"web-0", 1}, {"web-1", 1}, {"web-2", 1}}));
  for (std::uint16_t port = 4; port <= 7; ++port) after_remove[backend_name(balancer, run(lb, client_key(port), kSyn, t0 + kNanosPerSecond).key.dst_addr)]++;
  EXPECT_EQ(after_remove, (std::map<std::string, int>{{"web-1", 2}, {"web-2", 2}}));
  for (std::uint16_t port = 8; port <= 13; ++port) after_add[backend_name(balancer, run(lb, client_key(port), kSyn, t0 + 3 * kNanosPerSecond).key.dst_addr)]++;
  EXPECT_EQ(after_add, (std::map<std::string, int>{{"web-1", 2}, {"web-2", 2}, {"web-new", 2}}));
  // The connection on the removed backend is still there.
  EXPECT_EQ(run(lb, client_key(1), kAck, t0 + 4 * kNanosPerSecond).key, first.key);
}

TEST(LbChangeSchedule, ImpossibleChangesAreRefusedBeforeAnyPacket) {
  const BackendConfig added{"web-new", to_network32(0x0a0100ff), 0, 1};
  const std::vector<std::pair<std::vector<PoolChange>, std::string>> bad = {
      {{{0, "mail", PoolAction::drain, {"web-0", 0, 0, 0}}}, "no service is named 'mail'"},
      {{{0, "web", PoolAction::weight, {"web-9", 0, 0, 2}}}, "no backend 'web-9'"},
      {{{0, "web", PoolAction::add, {"web-1", 1, 0, 1}}}, "'web-1' is already"},
      {{{1, "web", PoolAction::remove, {"web-1", 0, 0, 0}}, {2, "web", PoolAction::weight, {"web-1", 0, 0, 3}}}, "no backend 'web-1'"},
      {{{0, "web", PoolAction::add, added}}, "at most 2"},  // 251 / 100: 3 backends already
  };
  const StatefulLbConfig config = lb_config();
  for (const auto& [changes, message] : bad) {
    try {
      const PoolChangeSchedule schedule(changes, config.services, config.maglev_size);
      ADD_FAILURE() << "accepted; expected: " << message;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  const std::vector<PoolChange> back = {{1, "web", PoolAction::remove, {"web-1", 0, 0, 0}}, {2, "web", PoolAction::add, {"web-1", 1, 0, 1}}};
  EXPECT_NO_THROW(PoolChangeSchedule(back, config.services, 401));  // a removed backend may come back
}

// ---- 6. A full table ----------------------------------------------------------------------------

TEST(LbTableFull, DropsAndCountsNewConnectionsAndEveryTrackedOneStillReachesItsBackend) {
  Lb lb = make_lb(LbPolicy::round_robin, 64);
  std::vector<Output> tracked;
  for (std::uint16_t port = 1; port <= 64; ++port) tracked.push_back(run(lb, client_key(port), kSyn));
  for (std::uint16_t port = 1000; port < 2000; ++port) {
    ASSERT_EQ(run(lb, client_key(port), port % 2 ? kSyn : kAck).verdict, Verdict::drop);
    ASSERT_EQ(run_udp(lb, client_key(port, ipproto::kUdp)).verdict, Verdict::forward);  // no UDP service: passes
  }
  EXPECT_EQ(drops(lb, NfDrop::table_full), 1000u);
  EXPECT_EQ(lb.tracker().size(), 64u);
  for (std::uint16_t port = 1; port <= 64; ++port) {
    const Output out = run(lb, client_key(port), kAck, kNanosPerSecond, 10);
    ASSERT_EQ(out.verdict, Verdict::forward);
    EXPECT_EQ(out.key, tracked[port - 1].key);
    EXPECT_EQ(run(lb, out.key.reversed(), kAck, kNanosPerSecond).key, client_key(port).reversed());
  }
  // Room again once a connection has ended and timed out.
  run(lb, client_key(1), kRst, 2 * kNanosPerSecond);
  lb.expire(20 * kNanosPerSecond);
  EXPECT_EQ(run(lb, client_key(5000), kSyn, 20 * kNanosPerSecond).verdict, Verdict::forward);
}

TEST(LbTableFull, StatelessFallbackForwardsByTheConsistentChoiceAndNeverEvicts) {
  StatefulLbConfig config = lb_config(LbPolicy::round_robin, 64);
  config.stateless_when_full = true;
  config.services = {web_service(3, ipproto::kTcp)};
  Lb lb(config);
  std::vector<Output> tracked;
  for (std::uint16_t port = 1; port <= 64; ++port) tracked.push_back(run(lb, client_key(port), kSyn));
  for (std::uint16_t port = 1000; port < 2000; ++port) {
    const FlowKeyV4 key = client_key(port);
    const Output out = run(lb, key, kSyn);
    ASSERT_EQ(out.verdict, Verdict::forward);
    ASSERT_EQ(out.key.dst_addr, consistent_address(lb, key));
    // Its reply, of no connection, still leaves with the VIP.
    ASSERT_EQ(run(lb, out.key.reversed(), kSyn | kAck).key, key.reversed());
  }
  EXPECT_EQ(drops(lb, NfDrop::table_full), 0u);
  EXPECT_EQ(lb.tracker().size(), 64u);
  for (std::uint16_t port = 1; port <= 64; ++port) {
    EXPECT_EQ(run(lb, client_key(port), kAck, kNanosPerSecond).key, tracked[port - 1].key);
    EXPECT_EQ(run(lb, tracked[port - 1].key.reversed(), kAck, kNanosPerSecond).key, client_key(port).reversed());
  }
}

// ---- The configuration file ---------------------------------------------------------------------


// 14 lines: a [lb] table and one service of two backends.
constexpr const char* kLbBase =
    "[lb]\npolicy = \"round_robin\"\nmaglev_size = 1009\n\n[[service]]\nname = \"web\"\nvip = \"198.18.0.1\"\nport = 443\n"
    "  [[service.backend]]\n  name = \"web-1\"\n  address = \"10.200.0.1\"\n  [[service.backend]]\n  name = \"web-2\"\n"
    "  address = \"10.200.0.2\"\n";

// The ConfigError `text` gives, or "" when it loads.
std::string config_error(const std::string& text) {
  try {
    load_stateful_lb_config(test::temp_config("lb.toml", text));
    return "";
  } catch (const ConfigError& e) {
    return e.what();
  }
}

TEST(LbConfig, NonSynFirstIsConsistentPolicyOrDrop) {
  EXPECT_EQ(load_stateful_lb_config(test::temp_config("a.toml", kLbBase)).non_syn_first, NonSynFirst::consistent);
  for (const auto& [name, value] : {std::pair{"consistent", NonSynFirst::consistent}, std::pair{"policy", NonSynFirst::policy},
                                    std::pair{"drop", NonSynFirst::drop}}) {
    std::string text = kLbBase;
    text.insert(text.find("maglev_size"), std::string("non_syn_first = \"") + name + "\"\n");
    EXPECT_EQ(load_stateful_lb_config(test::temp_config("a.toml", text)).non_syn_first, value) << name;
  }
  std::string bad = kLbBase;
  bad.insert(bad.find("maglev_size"), "non_syn_first = \"maglev\"\n");
  EXPECT_NE(config_error(bad).find("lb.toml:3: lb.non_syn_first: expected \"consistent\", \"policy\" or \"drop\""), std::string::npos)
      << config_error(bad);
}

TEST(LbMaglev, MoreBackendsThanSizeOver100IsAConfigErrorNamingTheKey) {
  std::string text = kLbBase;
  text.replace(text.find("1009"), 4, "199");  // takes at most 1 backend
  const std::string error = config_error(text);
  EXPECT_NE(error.find("lb.toml:"), std::string::npos) << error;
  EXPECT_NE(error.find(": service.backend: 2 backends"), std::string::npos) << error;
  EXPECT_NE(error.find("lb.maglev_size = 199 takes at most 1"), std::string::npos) << error;
  text.replace(text.find("199"), 3, "211");
  EXPECT_EQ(config_error(text), "");
  // The default size, 65537, takes 655 backends and not 656.
  std::string many = "[[service]]\nvip = \"198.18.0.1\"\nport = 443\n";
  for (int i = 0; i < 656; ++i) many += "[[service.backend]]\nname = \"b" + std::to_string(i) + "\"\naddress = \"10.1.0.1\"\n";
  EXPECT_NE(config_error(many).find("656 backends"), std::string::npos);
  many.resize(many.rfind("[[service.backend]]"));
  EXPECT_EQ(config_error(many), "");
}

TEST(LbConfig, ChangeScheduleIsReadAndSortedByTime) {
  const std::string text = std::string(kLbBase) +
                           "[[change]]\nat = 2.5\nservice = \"web\"\nbackend = \"web-2\"\naction = \"remove\"\n"
                           "[[change]]\nat = 1\nservice = \"web\"\nbackend = \"web-3\"\naction = \"add\"\naddress = \"10.200.0.3\"\n"
                           "port = 8080\nweight = 3\n"
                           "[[change]]\nat = 1\nservice = \"web\"\nbackend = \"web-1\"\naction = \"weight\"\nweight = 0\n"
                           "[[change]]\nat = 4\nservice = \"web\"\nbackend = \"web-3\"\naction = \"drain\"\n";
  const StatefulLbConfig config = load_stateful_lb_config(test::temp_config("a.toml", text));
  ASSERT_EQ(config.changes.size(), 4u);
  EXPECT_EQ(config.changes[0].at, kNanosPerSecond);
  EXPECT_EQ(config.changes[0].action, PoolAction::add);  // same time: file order kept
  EXPECT_EQ(config.changes[0].backend.address, to_network32(0x0ac80003));
  EXPECT_EQ(config.changes[0].backend.port, to_network16(8080));
  EXPECT_EQ(config.changes[0].backend.weight, 3u);
  EXPECT_EQ(config.changes[1].action, PoolAction::weight);
  EXPECT_EQ(config.changes[1].backend.weight, 0u);
  EXPECT_EQ(config.changes[2].at, 2'500'000'000u);
  EXPECT_EQ(config.changes[2].action, PoolAction::remove);
  EXPECT_EQ(config.changes[3].action, PoolAction::drain);
  EXPECT_NO_THROW(Lb{config});
}

// Each bad [[change]] is one error naming the file, the line and the key (the change starts on line 15).
TEST(LbConfig, BadChangeIsAnErrorNamingFileLineAndKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"at = 1\nservice = \"web\"\nbackend = \"web-1\"\naction = \"explode\"\n", "lb.toml:19: change.action"},
      {"service = \"web\"\nbackend = \"web-1\"\naction = \"drain\"\n", "lb.toml:15: change.at: missing"},
      {"at = -1\nservice = \"web\"\nbackend = \"web-1\"\naction = \"drain\"\n", "lb.toml:16: change.at"},
      {"at = \"soon\"\nservice = \"web\"\nbackend = \"web-1\"\naction = \"drain\"\n", "lb.toml:16: change.at"},
      {"at = 1\nservice = \"mail\"\nbackend = \"web-1\"\naction = \"drain\"\n", "lb.toml:17: change.service: no service is named 'mail'"},
      {"at = 1\nservice = \"web\"\nbackend = \"web-9\"\naction = \"remove\"\n", "lb.toml:18: change.backend: service 'web' has no backend 'web-9'"},
      {"at = 1\nservice = \"web\"\nbackend = \"web-1\"\naction = \"add\"\naddress = \"10.200.0.9\"\n", "lb.toml:18: change.backend: 'web-1' is already"},
      {"at = 1\nservice = \"web\"\nbackend = \"web-3\"\naction = \"add\"\n", "lb.toml:15: change.address: missing"},
      {"at = 1\nservice = \"web\"\nbackend = \"web-3\"\naction = \"add\"\naddress = \"10.200.0.999\"\n", "lb.toml:20: change.address"},
      {"at = 1\nservice = \"web\"\nbackend = \"web-1\"\naction = \"weight\"\n", "lb.toml:15: change.weight: missing"},
      {"at = 1\nservice = \"web\"\nbackend = \"web-1\"\naction = \"weight\"\nweight = -2\n", "lb.toml:20: change.weight"},
      {"at = 1\nservice = \"web\"\nbackend = \"web-1\"\naction = \"remove\"\nweight = 2\n", "lb.toml:20: change.weight: only"},
      {"at = 1\nservice = \"web\"\nbackend = \"web-1\"\naction = \"drain\"\nport = 80\n", "lb.toml:20: change.port: only"},
      {"at = 1\nservice = \"web\"\nbackend = \"web-1\"\naction = \"drain\"\nwhen = 3\n", "lb.toml:20: change.when: unknown key"},
  };
  for (const auto& [change, expected] : cases) {
    const std::string error = config_error(std::string(kLbBase) + "[[change]]\n" + change);
    EXPECT_NE(error.find(expected), std::string::npos) << "expected '" << expected << "', got '" << error << "'";
  }
  // A change after the one that removed its backend.
  const std::string twice = std::string(kLbBase) + "[[change]]\nat = 1\nservice = \"web\"\nbackend = \"web-1\"\naction = \"remove\"\n" +
                            "[[change]]\nat = 2\nservice = \"web\"\nbackend = \"web-1\"\naction = \"drain\"\n";
  EXPECT_NE(config_error(twice).find("lb.toml:23: change.backend: service 'web' has no backend 'web-1' at that time"),
            std::string::npos)
      << config_error(twice);
  // The stateless LB does not take a schedule.
  try {
    const std::string services = std::string(kLbBase).substr(std::string(kLbBase).find("[[service]]"));
    load_stateless_lb_config(test::temp_config("slb.toml", "[slb]\nmaglev_size = 1009\n" + services +
                                                          "[[change]]\nat = 1\nservice = \"web\"\nbackend = \"web-1\"\naction = \"drain\"\n"));
    ADD_FAILURE() << "slb accepted [[change]]";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("change: only the stateful LB"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace flowtrack
