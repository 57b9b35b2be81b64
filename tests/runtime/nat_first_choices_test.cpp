// A NAT load whose inside endpoints each have a first choice of their own (runtime/nat_first_choices.hpp)
// is translated alike whatever order its mappings are made in.
#include "flowtrack/runtime/nat_first_choices.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/runtime/live_functions.hpp"
#include "support/addresses.hpp"

namespace flowtrack {
namespace {

constexpr unsigned kChoosingWorkers = 2;
constexpr std::uint16_t kChoosingRemotePort = 443;

NatConfig first_choice_nat() {
  NatConfig c;
  c.inside_network = test::ipv4("10.0.0.0");
  c.pool = {test::ipv4("203.0.113.1")};
  c.port_first = 1024;
  c.port_last = 2047;  // 512 ports a worker: its 200 endpoints share first choices by the dozen
  c.max_sessions = c.max_mappings = 4096;
  return c;
}

ParsedPacket parsed_load_frame(std::span<const std::uint8_t> frame) {
  ParsedPacket p;
  EXPECT_EQ(parse_frame(frame, LinkType::ethernet, p), ParseStatus::ok);
  return p;
}

// Each of `endpoints` inside endpoints (10.0.x.y, one port among a few: 1500 is in worker 0's slice,
// 40000 in none) sends a packet to a remote and gets an answer.
PacketStore nat_load(unsigned endpoints) {
  PacketStore trace(LinkType::ethernet);
  const std::uint32_t remote = ntohl(test::ipv4("198.51.100.1"));
  for (unsigned i = 0; i < endpoints; ++i) {
    const std::uint32_t inside = ntohl(test::ipv4("10.0.0.1")) + i / 2;
    const std::uint16_t port = i % 2 == 0 ? 1500 : 40000;
    const auto out = build_frame(FrameSpec::tcp4(FlowKeyV4::from_host(inside, remote, port, kChoosingRemotePort, ipproto::kTcp), tcpflag::kSyn));
    const auto back = build_frame(FrameSpec::tcp4(FlowKeyV4::from_host(remote, inside, kChoosingRemotePort, port, ipproto::kTcp), tcpflag::kSyn | tcpflag::kAck));
    trace.append(out, 2 * i, static_cast<std::uint32_t>(out.size()));
    trace.append(back, 2 * i + 1, static_cast<std::uint32_t>(back.size()));
  }
  return trace;
}

// The external endpoint of every inside endpoint (address, port: network order) after `nat` was shown
// the trace's outbound packets `order` (indices into the trace).
std::map<std::pair<std::uint32_t, std::uint16_t>, std::uint16_t> ports_mapped(LiveNat& nat, const PacketStore& trace,
                                                                               const std::vector<std::uint32_t>& order) {
  std::map<std::pair<std::uint32_t, std::uint16_t>, std::uint16_t> ports;
  for (const std::uint32_t i : order) {
    std::vector<std::uint8_t> frame(trace[i].bytes.begin(), trace[i].bytes.end());  // the NAT translates its copy
    NfPacket packet{.frame = frame, .parsed = parsed_load_frame(frame)};
    EXPECT_EQ(process_packet(nat, packet, 0), Verdict::forward);
  }
  for (const std::uint32_t i : order) {
    const FlowKeyV4 k = parsed_load_frame(trace[i].bytes).key4;
    const NatMapping* m = nat.mapping_of(k.src_addr, k.src_port, k.protocol);
    EXPECT_NE(m, nullptr);
    if (m != nullptr) ports[{k.src_addr, k.src_port}] = m->external_port;
  }
  return ports;
}

TEST(NatFirstChoices, MovedEndpointsKeepTheirConnectionsAndEveryOrderGivesTheSamePorts) {
  const NatConfig config = first_choice_nat();
  const PacketOwner owner = PacketOwner::nat(kChoosingWorkers, config);
  PacketStore trace = nat_load(400);
  const FirstChoices choices = give_each_endpoint_its_first_choice(trace, config, owner, kChoosingWorkers);
  EXPECT_EQ(choices.endpoints, 400u);
  EXPECT_GT(choices.moved, 50u);  // some 100 endpoints of worker 0 ask for port 1500 first

  // Each answer still goes to the endpoint its request came from (moved both ways, checksums right),
  // and no two endpoints share one.
  std::set<std::pair<std::uint32_t, std::uint16_t>> endpoints;
  std::vector<std::vector<std::uint32_t>> outbound(kChoosingWorkers);
  for (std::uint32_t i = 0; i < trace.size(); i += 2) {
    const ParsedPacket out = parsed_load_frame(trace[i].bytes), back = parsed_load_frame(trace[i + 1].bytes);
    EXPECT_EQ(back.key4, out.key4.reversed());
    EXPECT_TRUE(endpoints.insert({out.key4.src_addr, out.key4.src_port}).second);
    outbound[owner.owner(out, 0)].push_back(i);
  }
  // Each worker's NAT, shown its outbound packets in the trace's order and in the reverse order, maps
  // every endpoint to the same port both times.
  for (unsigned w = 0; w < kChoosingWorkers; ++w) {
    ASSERT_FALSE(outbound[w].empty());
    LiveNat in_order(config, w, kChoosingWorkers), reversed(config, w, kChoosingWorkers);
    const auto forward = ports_mapped(in_order, trace, outbound[w]);
    std::vector<std::uint32_t> backwards(outbound[w].rbegin(), outbound[w].rend());
    EXPECT_EQ(ports_mapped(reversed, trace, backwards), forward) << "worker " << w;
  }
}

TEST(NatFirstChoices, WithoutThemTheOrderDecidesSomePorts) {
  const NatConfig config = first_choice_nat();
  const PacketOwner owner = PacketOwner::nat(kChoosingWorkers, config);
  PacketStore trace = nat_load(400);
  std::vector<std::uint32_t> outbound;
  for (std::uint32_t i = 0; i < trace.size(); i += 2) {
    if (owner.owner(parsed_load_frame(trace[i].bytes), 0) == 0) outbound.push_back(i);
  }
  LiveNat in_order(config, 0, kChoosingWorkers), reversed(config, 0, kChoosingWorkers);
  const auto forward = ports_mapped(in_order, trace, outbound);
  std::ranges::reverse(outbound);
  EXPECT_NE(ports_mapped(reversed, trace, outbound), forward);
}

TEST(NatFirstChoices, BlocksAreRefused) {
  NatConfig config = first_choice_nat();
  config.block_size = 64;
  PacketStore trace = nat_load(2);
  EXPECT_THROW(give_each_endpoint_its_first_choice(trace, config, PacketOwner::nat(kChoosingWorkers, config), kChoosingWorkers), std::invalid_argument);
}

}  // namespace
}  // namespace flowtrack
