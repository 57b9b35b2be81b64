// The owner of a packet among a live data plane's workers (runtime/packet_owner.hpp): both directions
// of a connection, as they look on the wire after the function's rewrites, must name the same worker,
// and every worker must own a share.
#include "flowtrack/runtime/packet_owner.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "flowtrack/util/random.hpp"
#include "support/addresses.hpp"

namespace flowtrack {
namespace {

constexpr unsigned kWorkers = 4;

// What the ports read of a frame, which they ask the owner of.
ParsedPacket parsed(const std::vector<std::uint8_t>& frame) {
  ParsedPacket p;
  EXPECT_EQ(parse_frame(frame, LinkType::ethernet, p), ParseStatus::ok);
  return p;
}

std::vector<std::uint8_t> tcp_frame(std::uint32_t source, std::uint16_t sport, std::uint32_t destination, std::uint16_t dport) {
  return build_frame(FrameSpec::tcp4(FlowKeyV4::from_host(ntohl(source), ntohl(destination), sport, dport, ipproto::kTcp), tcpflag::kAck));
}

ParsedPacket tcp(std::uint32_t source, std::uint16_t sport, std::uint32_t destination, std::uint16_t dport) {
  return parsed(tcp_frame(source, sport, destination, dport));
}

TEST(PacketOwner, OneWorkerOwnsEverythingItReceives) {
  const auto packet = tcp(test::ipv4("10.0.0.1"), 1000, test::ipv4("10.0.0.2"), 80);
  EXPECT_EQ(PacketOwner::spread(1).owner(packet, 0), 0u);
  EXPECT_EQ(PacketOwner{}.owner(packet, 3), 3u);
}

TEST(PacketOwner, SpreadGivesBothDirectionsOfAConnectionOneWorkerAndEveryWorkerAShare) {
  const PacketOwner owner = PacketOwner::spread(kWorkers);
  Random random(7);
  std::set<unsigned> used;
  for (int i = 0; i < 1000; ++i) {
    const auto a = static_cast<std::uint32_t>(random.next()), b = static_cast<std::uint32_t>(random.next());
    const auto pa = static_cast<std::uint16_t>(random.next()), pb = static_cast<std::uint16_t>(random.next());
    const unsigned forward = owner.owner(tcp(a, pa, b, pb), 0);
    EXPECT_EQ(owner.owner(tcp(b, pb, a, pa), 1), forward);
    used.insert(forward);
  }
  EXPECT_EQ(used.size(), kWorkers);
}

// The LB keeps the client's endpoint (no source NAT): a request goes to the VIP, the backend's answer
// comes back to the client's endpoint from the backend's address.
TEST(PacketOwner, TheLbsRequestAndTheBackendsAnswerNameTheClientsWorker) {
  const std::uint32_t vip = test::ipv4("10.10.1.100"), backend = test::ipv4("10.10.2.11");
  const PacketOwner owner = PacketOwner::lb_client(kWorkers, {vip});
  std::set<unsigned> used;
  for (std::uint16_t port = 30000; port < 30400; ++port) {
    const std::uint32_t client = test::ipv4(("10.10.1." + std::to_string(2 + port % 50)).c_str());
    const unsigned request = owner.owner(tcp(client, port, vip, 80), 0);
    EXPECT_EQ(owner.owner(tcp(backend, 80, client, port), 2), request);
    used.insert(request);
  }
  EXPECT_EQ(used.size(), kWorkers);
}

// Inbound NAT packets go to the worker whose slice of the external ports holds their destination port
// (the slices Nat44 itself allocates from); outbound ones by their inside address.
TEST(PacketOwner, TheNatsInboundPacketsGoToTheWorkerWhoseSliceHoldsTheirPort) {
  NatConfig config;
  config.pool = {test::ipv4("192.0.2.1")};
  config.port_first = 1024;
  config.port_last = 2047;
  config.max_sessions = config.max_mappings = 1024;
  const PacketOwner owner = PacketOwner::nat(kWorkers, config);
  const std::uint32_t server = test::ipv4("198.51.100.7");
  for (unsigned w = 0; w < kWorkers; ++w) {
    const Nat44<CuckooTable<FlowKeyV4>> nat(config, w, kWorkers);
    for (unsigned port = nat.port_first(); port <= nat.port_last(); ++port) {
      ASSERT_EQ(owner.owner(tcp(server, 443, config.pool[0], static_cast<std::uint16_t>(port)), 0), w) << port;
    }
  }
  // An echo reply by its identifier; an ICMP error by the external port of the packet it quotes.
  FrameSpec echo_reply = FrameSpec::tcp4(FlowKeyV4::from_host(ntohl(server), ntohl(config.pool[0]), 2047, 0, ipproto::kIcmp), 0);
  echo_reply.icmp_type = 0;
  EXPECT_EQ(owner.owner(parsed(build_frame(echo_reply)), 0), kWorkers - 1);
  const auto sent = tcp_frame(config.pool[0], 1030, server, 443);
  const std::span<const std::uint8_t> quoted = std::span(sent).subspan(14);  // from its IP header on
  FrameSpec error = FrameSpec::tcp4(FlowKeyV4::from_host(ntohl(server), ntohl(config.pool[0]), 0, 0, ipproto::kIcmp), 0);
  error.icmp_type = 3;
  error.icmp_quoted = quoted;
  EXPECT_EQ(owner.owner(parsed(build_frame(error)), 2), 0u);
  // Outbound: every flow of one inside address on one worker.
  const std::uint32_t inside = test::ipv4("10.0.0.9");
  const unsigned first = owner.owner(tcp(inside, 5000, server, 443), 0);
  for (std::uint16_t port = 5001; port < 5100; ++port) EXPECT_EQ(owner.owner(tcp(inside, port, server, 443), port % kWorkers), first);
}

TEST(PacketOwner, APacketWhoseOwnerCannotBeReadStaysWhereItWasReceived) {
  FrameSpec v6 = FrameSpec::tcp4(FlowKeyV4::from_host(0x0a000001, 0x0a000002, 1000, 80, ipproto::kTcp), tcpflag::kAck);
  v6.ip_version = 6;
  v6.key6.protocol = ipproto::kTcp;
  for (unsigned received_by = 0; received_by < kWorkers; ++received_by) {
    EXPECT_EQ(PacketOwner::spread(kWorkers).owner(parsed(build_frame(v6)), received_by), received_by);
  }
  // An inbound fragment after the first carries no ports, so not the one that names its owner.
  NatConfig config;
  config.pool = {test::ipv4("192.0.2.1")};
  ParsedPacket later_fragment = tcp(test::ipv4("198.51.100.7"), 443, config.pool[0], 1030);
  later_fragment.is_fragment = true;
  later_fragment.has_ports = false;
  later_fragment.key4.src_port = later_fragment.key4.dst_port = 0;
  EXPECT_EQ(PacketOwner::nat(kWorkers, config).owner(later_fragment, 3), 3u);
}

}  // namespace
}  // namespace flowtrack
