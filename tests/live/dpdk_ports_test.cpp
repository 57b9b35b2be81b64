// DPDK ports as the burst loop's source and output (runtime/dpdk_ports.hpp), on ring ports that this
// test wires itself (rte_eth_from_rings: each port's RX is a ring the test fills, its TX a ring the test
// empties), so it needs no NIC, no root and no hugepages. It proves that a function's forwarded
// packets leave in the very mbufs they arrived in, rewritten in place (a tunnel's headers in the mbuf's
// headroom); that the ports answer and send ARP; that released held packets leave in fresh mbufs; and
// that every mbuf goes back to its pool.
#include "flowtrack/runtime/dpdk_ports.hpp"

#include <gtest/gtest.h>
#include <rte_eth_ring.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "flowtrack/io/dpdk_eal_start.hpp"
#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/nf/stateless_lb.hpp"
#include "flowtrack/packet/frame_builder.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/runtime/burst_loop.hpp"
#include "flowtrack/table/cuckoo.hpp"
#include "support/addresses.hpp"

namespace flowtrack {
namespace {

const MacAddress kClient{0x02, 0, 0, 0, 0xc, 2}, kBackend{0x02, 0, 0, 0, 0xb, 0x11};

void start_eal() {
  static const bool started = [] {
    // No shared files, no hugepages: the smallest EAL that runs ports.
    start_dpdk_eal({"--no-huge", "--no-pci", "--no-shconf", "--no-telemetry", "-l", "0", "-m", "256", "--log-level=error"});
    return true;
  }();
  ASSERT_TRUE(started);
}

// A ring port: what the test enqueues on `rx[q]` the port receives on queue q; what the port sends on
// queue q lands on `tx[q]`. It has `tx_queues` TX queues and `rx_queues` RX queues.
struct RingPort {
  std::string name;    // the rings'
  std::string device;  // the port's: the ring PMD prefixes the name it is given
  std::vector<rte_ring*> rx, tx;

  RingPort(const std::string& port_name, unsigned tx_queues, unsigned rx_queues)
      : name(port_name), device("net_ring_" + port_name) {
    for (unsigned q = 0; q < tx_queues; ++q) {
      tx.push_back(rte_ring_create((name + "_tx" + std::to_string(q)).c_str(), 256, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ));
      EXPECT_NE(tx.back(), nullptr);
    }
    for (unsigned q = 0; q < rx_queues; ++q) {
      rx.push_back(rte_ring_create((name + "_rx" + std::to_string(q)).c_str(), 256, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ));
      EXPECT_NE(rx.back(), nullptr);
    }
    EXPECT_GE(rte_eth_from_rings(name.c_str(), rx.data(), rx_queues, tx.data(), tx_queues, SOCKET_ID_ANY), 0);
  }
  ~RingPort() {
    for (rte_ring* r : rx) rte_ring_free(r);
    for (rte_ring* r : tx) rte_ring_free(r);
  }

  // Everything the port sent on queue q, in order.
  std::vector<rte_mbuf*> sent(unsigned q = 0) const {
    std::vector<rte_mbuf*> out(256);
    out.resize(rte_ring_dequeue_burst(tx[q], reinterpret_cast<void**>(out.data()), 256, nullptr));
    return out;
  }
};

// The test's side of the wire: frames come from its own pool, so the ports' pool counts only theirs.
class DpdkPortsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    start_eal();
    static int run = 0;  // ring and pool names are global to the process
    const std::string tag = std::to_string(run++);
    wire_ = rte_pktmbuf_pool_create(("wire" + tag).c_str(), 511, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    ASSERT_NE(wire_, nullptr);
    wire_ports(1, 1);
  }
  // The two ring ports, with `tx_queues` TX queues and `rx_queues` RX queues each.
  void wire_ports(unsigned tx_queues, unsigned rx_queues) {
    static int ports = 0;
    const std::string tag = std::to_string(ports++);
    backends_.reset();
    clients_.reset();
    clients_ = std::make_unique<RingPort>("clients" + tag, tx_queues, rx_queues);
    backends_ = std::make_unique<RingPort>("backends" + tag, tx_queues, rx_queues);
    config_.ports = {{clients_->device, test::ipv4("10.1.0.1"), 24, 0}, {backends_->device, test::ipv4("10.2.0.1"), 24, 0}};
  }
  void TearDown() override {
    backends_.reset();
    clients_.reset();
    // Every frame the test put on the wire came back to its pool (sent on and freed, or dropped).
    EXPECT_EQ(rte_mempool_in_use_count(wire_), 0u);
    rte_mempool_free(wire_);
  }

  rte_mbuf* inject(RingPort& port, std::span<const std::uint8_t> frame, unsigned queue = 0) {
    rte_mbuf* m = rte_pktmbuf_alloc(wire_);
    EXPECT_NE(m, nullptr);
    std::memcpy(rte_pktmbuf_append(m, static_cast<std::uint16_t>(frame.size())), frame.data(), frame.size());
    EXPECT_EQ(rte_ring_enqueue(port.rx[queue], m), 0);
    return m;
  }
  static std::span<const std::uint8_t> bytes(rte_mbuf* m) { return {rte_pktmbuf_mtod(m, const std::uint8_t*), rte_pktmbuf_data_len(m)}; }
  static MacAddress destination_mac(rte_mbuf* m) {
    MacAddress mac;
    std::memcpy(mac.data(), bytes(m).data(), 6);
    return mac;
  }
  static MacAddress source_mac(rte_mbuf* m) {
    MacAddress mac;
    std::memcpy(mac.data(), bytes(m).data() + 6, 6);
    return mac;
  }
  void free_all(const std::vector<rte_mbuf*>& mbufs) {
    for (rte_mbuf* m : mbufs) rte_pktmbuf_free(m);
  }
  // each(queue, mbuf, parsed) for every frame `port` sent on its first `queues` queues, which must all
  // parse; each is freed after.
  template <class Each>
  void each_sent(RingPort& port, unsigned queues, Each&& each) {
    for (unsigned q = 0; q < queues; ++q) {
      for (rte_mbuf* m : port.sent(q)) {
        ParsedPacket parsed;
        EXPECT_EQ(parse_frame(bytes(m), LinkType::ethernet, parsed), ParseStatus::ok);
        each(q, m, parsed);
        rte_pktmbuf_free(m);
      }
    }
  }

  // Runs the loop until the ports have been idle for a poll (no tick started: its end is past).
  template <class Nf>
  WorkerCounters run(Nf& nf, DpdkPorts& ports) {
    WorkerCounters counters;
    StageClock clock(false);
    run_burst_loop(nf, ports, ports, 32, counters, clock);
    return counters;
  }

  void two_nat_workers(unsigned rx_queues);

  rte_mempool* wire_ = nullptr;
  std::unique_ptr<RingPort> clients_, backends_;
  DataplaneConfig config_;
};

StatelessLbConfig one_service() {
  StatelessLbConfig config;
  config.services.push_back({"web", test::ipv4("10.1.0.100"), htons(80), ipproto::kTcp, {{"b1", test::ipv4("10.2.0.11"), 0, 1}}});
  return config;
}

std::vector<std::uint8_t> tcp_from_client(const MacAddress& to, std::uint16_t source_port, const char* destination = "10.1.0.100") {
  FrameSpec spec = FrameSpec::tcp4(FlowKeyV4::from_host(ntohl(test::ipv4("10.1.0.2")), ntohl(test::ipv4(destination)), source_port, 80, ipproto::kTcp),
                                   tcpflag::kSyn, 100);
  spec.src_mac = kClient;
  spec.dst_mac = to;
  return build_frame(spec);
}

std::vector<std::uint8_t> arp_frame(const MacAddress& to, const ArpMessage& m) {
  std::vector<std::uint8_t> frame(kArpFrameSize);
  write_arp(frame, to, m.sender_mac, m);
  return frame;
}

TEST_F(DpdkPortsTest, ForwardedPacketsLeaveInTheMbufsTheyCameInRewrittenInPlace) {
  StatelessLb lb(one_service());
  std::vector<rte_mbuf*> injected;
  {
    DpdkPortGroup group(config_, 1, {});
    DpdkPorts ports(group, 0, {test::ipv4("10.1.0.100")}, {test::ipv4("10.2.0.11")});
    const MacAddress port_a = ports.layer2().ports()[0].mac, port_b = ports.layer2().ports()[1].mac;

    // Starting, the ports asked for the backend, on its side, from their own pool.
    const std::vector<rte_mbuf*> asked = backends_->sent();
    ASSERT_EQ(asked.size(), 1u);
    const auto request = parse_arp(bytes(asked[0]));
    ASSERT_TRUE(request);
    EXPECT_EQ(request->operation, ArpMessage::kRequest);
    EXPECT_EQ(request->target_ip, test::ipv4("10.2.0.11"));
    EXPECT_EQ(request->sender_mac, port_b);
    EXPECT_EQ(destination_mac(asked[0]), kBroadcastMac);
    free_all(asked);

    // The backend answers; the client asks for the VIP and is answered with port A's MAC.
    inject(*backends_, arp_frame(port_b, {ArpMessage::kReply, kBackend, test::ipv4("10.2.0.11"), port_b, test::ipv4("10.2.0.1")}));
    inject(*clients_, arp_frame(kBroadcastMac, {ArpMessage::kRequest, kClient, test::ipv4("10.1.0.2"), MacAddress{}, test::ipv4("10.1.0.100")}));
    run(lb, ports);
    const std::vector<rte_mbuf*> answered = clients_->sent();
    ASSERT_EQ(answered.size(), 1u);
    const auto reply = parse_arp(bytes(answered[0]));
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->operation, ArpMessage::kReply);
    EXPECT_EQ(reply->sender_ip, test::ipv4("10.1.0.100"));
    EXPECT_EQ(reply->sender_mac, port_a);
    EXPECT_EQ(destination_mac(answered[0]), kClient);
    free_all(answered);

    for (std::uint16_t i = 0; i < 8; ++i) injected.push_back(inject(*clients_, tcp_from_client(port_a, 40000 + i)));
    const WorkerCounters counters = run(lb, ports);
    EXPECT_EQ(counters.packets, 8u);
    const std::vector<rte_mbuf*> forwarded = backends_->sent();
    ASSERT_EQ(forwarded, injected);  // the same mbufs, in order: nothing was copied
    for (rte_mbuf* m : forwarded) {
      ParsedPacket parsed;
      ASSERT_EQ(parse_frame(bytes(m), LinkType::ethernet, parsed), ParseStatus::ok);
      EXPECT_EQ(parsed.key4.dst_addr, test::ipv4("10.2.0.11"));
      EXPECT_EQ(destination_mac(m), kBackend);
      EXPECT_EQ(source_mac(m), port_b);
    }
    free_all(forwarded);
    EXPECT_EQ(ports.counters().to_function, 8u);
    ports.close();
    EXPECT_EQ(group.close(), 0u);
  }
  EXPECT_EQ(lb.counters().forwarded, 8u);
}

// A tunnel's headers go into the mbuf's headroom: the frame starts earlier in the same mbuf, and the
// client's packet leaves from where it arrived, byte for byte, behind them.
TEST_F(DpdkPortsTest, ATunnelsHeadersGoInTheMbufsHeadroomBeforeThePacketWhereItArrived) {
  StatelessLbConfig config = one_service();
  config.services[0].tunnel.mode = ForwardMode::ipip;
  config.services[0].tunnel.source = test::ipv4("10.2.0.1");
  StatelessLb lb(config);
  DpdkPortGroup group(config_, 1, {});
  DpdkPorts ports(group, 0, {test::ipv4("10.1.0.100")}, {test::ipv4("10.2.0.11")});
  const MacAddress port_a = ports.layer2().ports()[0].mac, port_b = ports.layer2().ports()[1].mac;
  free_all(backends_->sent());  // the ports' ARP request for the backend, which answers
  inject(*backends_, arp_frame(port_b, {ArpMessage::kReply, kBackend, test::ipv4("10.2.0.11"), port_b, test::ipv4("10.2.0.1")}));
  run(lb, ports);

  const std::vector<std::uint8_t> sent = tcp_from_client(port_a, 40000);
  rte_mbuf* const m = inject(*clients_, sent);
  const std::uint8_t* const ip = rte_pktmbuf_mtod(m, const std::uint8_t*) + 14;
  const std::uint16_t headroom = rte_pktmbuf_headroom(m);
  run(lb, ports);
  const std::vector<rte_mbuf*> forwarded = backends_->sent();
  ASSERT_EQ(forwarded, std::vector<rte_mbuf*>{m});
  EXPECT_EQ(rte_pktmbuf_headroom(m), headroom - 20);
  EXPECT_EQ(rte_pktmbuf_mtod(m, const std::uint8_t*) + 14 + 20, ip);  // the client's packet did not move
  EXPECT_EQ(std::size_t{rte_pktmbuf_data_len(m)}, sent.size() + 20);
  EXPECT_EQ(rte_pktmbuf_pkt_len(m), sent.size() + 20);
  ParsedPacket outer;
  ASSERT_EQ(parse_frame(bytes(m), LinkType::ethernet, outer), ParseStatus::ok);
  EXPECT_EQ(outer.key4.protocol, 4);  // IPIP
  EXPECT_EQ(outer.key4.dst_addr, test::ipv4("10.2.0.11"));
  EXPECT_EQ(destination_mac(m), kBackend);
  EXPECT_EQ(source_mac(m), port_b);
  EXPECT_TRUE(std::equal(sent.begin() + 14, sent.end(), bytes(m).begin() + 34));
  free_all(forwarded);
  ports.close();
  EXPECT_EQ(group.close(), 0u);
}

TEST_F(DpdkPortsTest, EveryDroppedFrameIsFreedAndCountedByReason) {
  StatelessLb lb(one_service());
  DpdkPortGroup group(config_, 1, {});
  DpdkPorts ports(group, 0, {test::ipv4("10.1.0.100")}, {});
  const MacAddress port_a = ports.layer2().ports()[0].mac;
  free_all(backends_->sent());

  FrameSpec ipv6;
  ipv6.ip_version = 6;
  ipv6.dst_mac = port_a;
  inject(*clients_, build_frame(ipv6));                             // not IPv4
  inject(*clients_, tcp_from_client(kBackend, 1));                  // for another MAC
  std::vector<std::uint8_t> cut = tcp_from_client(port_a, 2);
  cut.resize(kEthernetHeaderSize + 10);                             // IPv4 header cut: the parser's drop
  inject(*clients_, cut);
  inject(*clients_, tcp_from_client(port_a, 3, "10.2.0.99"));       // no service: passed, next hop unknown
  inject(*clients_, tcp_from_client(port_a, 4, "192.0.2.1"));       // no route (no gateway)
  const WorkerCounters counters = run(lb, ports);
  EXPECT_EQ(counters.packets, 2u);  // the two that parsed: the ports hand the function parsed packets only
  EXPECT_EQ(ports.counters().drops[static_cast<std::size_t>(PortDrop::arp_unresolved)], 0u);  // it waits
  ports.refresh_neighbours(DpdkPorts::now() + DpdkPorts::kWaitLimit);                           // in vain

  const auto& drops = ports.counters().drops;
  EXPECT_EQ(drops[static_cast<std::size_t>(PortDrop::not_ipv4)], 1u);
  EXPECT_EQ(drops[static_cast<std::size_t>(PortDrop::not_our_mac)], 1u);
  EXPECT_EQ(ports.counters().parse_drops[static_cast<std::size_t>(ParseStatus::truncated_ipv4)], 1u);
  EXPECT_EQ(drops[static_cast<std::size_t>(PortDrop::arp_unresolved)], 1u);
  EXPECT_EQ(drops[static_cast<std::size_t>(PortDrop::no_route)], 1u);
  // The unknown next hop was asked for.
  const std::vector<rte_mbuf*> asked = backends_->sent();
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(parse_arp(bytes(asked[0]))->target_ip, test::ipv4("10.2.0.99"));
  free_all(asked);
  ports.close();
  EXPECT_EQ(group.close(), 0u);
}

TEST_F(DpdkPortsTest, PacketsToAnUnresolvedNextHopLeaveOnceItAnswers) {
  StatelessLb lb(one_service());
  DpdkPortGroup group(config_, 1, {});
  DpdkPorts ports(group, 0, {}, {});
  const MacAddress port_a = ports.layer2().ports()[0].mac, port_b = ports.layer2().ports()[1].mac;
  rte_mbuf* first = inject(*clients_, tcp_from_client(port_a, 1, "10.2.0.99"));
  rte_mbuf* second = inject(*clients_, tcp_from_client(port_a, 2, "10.2.0.99"));
  run(lb, ports);
  const std::vector<rte_mbuf*> asked = backends_->sent();  // one request for both
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(parse_arp(bytes(asked[0]))->target_ip, test::ipv4("10.2.0.99"));
  free_all(asked);
  inject(*backends_, arp_frame(port_b, {ArpMessage::kReply, kBackend, test::ipv4("10.2.0.99"), port_b, test::ipv4("10.2.0.1")}));
  run(lb, ports);
  const std::vector<rte_mbuf*> sent = backends_->sent();
  ASSERT_EQ(sent, (std::vector<rte_mbuf*>{first, second}));  // in order, in their own mbufs
  EXPECT_EQ(destination_mac(sent[0]), kBackend);
  free_all(sent);
  EXPECT_EQ(ports.counters().drops[static_cast<std::size_t>(PortDrop::arp_unresolved)], 0u);
  ports.close();
  EXPECT_EQ(group.close(), 0u);
}

TEST_F(DpdkPortsTest, CloseCountsTheMbufsThatDidNotComeBack) {
  DpdkPortGroup group(config_, 1, {});
  DpdkPorts ports(group, 0, {}, {test::ipv4("10.2.0.11")});
  const std::vector<rte_mbuf*> asked = backends_->sent();  // the ARP request, still out
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(group.mbufs_in_use(), 1u);
  ports.close();
  EXPECT_EQ(group.close(), 1u);
  free_all(asked);  // back into the pool close() kept for it
}

// Holds the first packet of each burst (keeping a copy) and releases it after the second's verdict, as
// the NAT does with a fragment that came before its first one.
struct HoldFirst {
  std::vector<std::uint8_t> kept;
  template <BurstOutput Out>
  void process_burst(std::span<NfPacket> burst, Out& out) {
    for (std::size_t i = 0; i < burst.size(); ++i) {
      if (i == 0) {
        kept.assign(burst[i].frame.begin(), burst[i].frame.end());
        out.verdict(burst[i], Verdict::held);
        continue;
      }
      out.verdict(burst[i], Verdict::forward);
      if (i == 1) out.held(kept, static_cast<std::uint32_t>(kept.size()));
    }
  }
  std::size_t expire(Nanos, std::size_t) { return 0; }
  NfCounters counters() const { return {}; }
};

TEST_F(DpdkPortsTest, ReleasedHeldPacketsLeaveInFreshMbufsOfThePortsPool) {
  HoldFirst nf;
  DpdkPortGroup group(config_, 1, {});
  DpdkPorts ports(group, 0, {}, {test::ipv4("10.2.0.11")});
  const MacAddress port_a = ports.layer2().ports()[0].mac, port_b = ports.layer2().ports()[1].mac;
  free_all(backends_->sent());
  inject(*backends_, arp_frame(port_b, {ArpMessage::kReply, kBackend, test::ipv4("10.2.0.11"), port_b, test::ipv4("10.2.0.1")}));
  rte_mbuf* first = inject(*clients_, tcp_from_client(port_a, 1, "10.2.0.11"));
  rte_mbuf* second = inject(*clients_, tcp_from_client(port_a, 2, "10.2.0.11"));
  run(nf, ports);
  const std::vector<rte_mbuf*> sent = backends_->sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0], second);
  EXPECT_NE(sent[1], first);  // the held one was freed at its verdict; its copy left in a new mbuf
  EXPECT_NE(sent[1]->pool, wire_);
  ParsedPacket parsed;
  ASSERT_EQ(parse_frame(bytes(sent[1]), LinkType::ethernet, parsed), ParseStatus::ok);
  EXPECT_EQ(to_host16(parsed.key4.src_port), 1);
  EXPECT_EQ(destination_mac(sent[1]), kBackend);
  free_all(sent);
  ports.close();
  EXPECT_EQ(group.close(), 0u);
}

// What starting a group of `workers` on `config` throws (empty when it starts).
std::string group_error(const DataplaneConfig& config, unsigned workers) {
  try {
    DpdkPortGroup group(config, workers, {});
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST_F(DpdkPortsTest, AnUnknownDeviceIsAClearError) {
  DataplaneConfig bad = config_;
  bad.ports[1].device = "net_nonexistent0";
  const std::string error = group_error(bad, 1);
  EXPECT_NE(error.find("no DPDK port named 'net_nonexistent0'"), std::string::npos) << error;
}

TEST_F(DpdkPortsTest, APortWithFewerTxQueuesThanWorkersIsAClearError) {
  const std::string error = group_error(config_, 2);
  EXPECT_NE(error.find("has 1 TX queue(s); 2 workers need one each"), std::string::npos) << error;
}

// Two workers, each its own NAT instance (its slice of the external ports) on its own TX queue of
// both ports, and `rx_queues` RX queues, over which the NIC spreads frames regardless of who owns them
// (with one, worker 1 polls none and gets every frame it owns from worker 0: the software dispatch):
// every frame must still reach the worker whose NAT holds its session, outbound (by inside address)
// and inbound (by the external port it is addressed to), over the hand-off rings. The server's ARP
// answer arrives on one queue only; the other worker learns it from the ARP board.
void DpdkPortsTest::two_nat_workers(unsigned rx_queues) {
  using Nat = Nat44<CuckooTable<FlowKeyV4>>;
  constexpr unsigned kWorkers = 2;
  wire_ports(kWorkers, rx_queues);
  NatConfig nat;
  nat.inside_network = test::ipv4("10.1.0.0");
  nat.inside_prefix_length = 24;
  nat.pool = {test::ipv4("10.2.0.100")};
  nat.port_first = 20000;
  nat.port_last = 20999;
  nat.max_sessions = nat.max_mappings = 1024;
  DpdkPortGroup group(config_, kWorkers, PacketOwner::nat(kWorkers, nat));
  ASSERT_EQ(group.rx_queues(), rx_queues);
  std::vector<std::unique_ptr<Nat>> nats;
  std::vector<std::unique_ptr<DpdkPorts>> ports;
  for (unsigned w = 0; w < kWorkers; ++w) {
    nats.push_back(std::make_unique<Nat>(nat, w, kWorkers));
    ports.push_back(std::make_unique<DpdkPorts>(group, w, std::vector{test::ipv4("10.2.0.100")}, std::vector{test::ipv4("10.2.0.11")}));
  }
  const MacAddress port_a = group.mac(0), port_b = group.mac(1);
  for (unsigned q = 0; q < kWorkers; ++q) free_all(backends_->sent(q));  // each worker's ARP request
  // The last queue's worker takes the answer in and posts it on the board.
  const unsigned last = rx_queues - 1;
  inject(*backends_, arp_frame(port_b, {ArpMessage::kReply, kBackend, test::ipv4("10.2.0.11"), port_b, test::ipv4("10.2.0.1")}), last);
  run(*nats[last], *ports[last]);
  const auto run_all = [&] {
    for (int round = 0; round < 3; ++round) {  // a frame handed over in one round is served in the next
      for (unsigned w = 0; w < kWorkers; ++w) run(*nats[w], *ports[w]);
    }
  };

  // Outbound: 40 clients, each first asking for its gateway's MAC as a host does (so the NAT learns
  // the client's), then a SYN, both on the queue its number picks, owner or not.
  constexpr int kClients = 40;
  const auto client = [](int c) { return test::ipv4(("10.1.0." + std::to_string(10 + c)).c_str()); };
  for (int c = 0; c < kClients; ++c) {
    inject(*clients_, arp_frame(kBroadcastMac, {ArpMessage::kRequest, kClient, client(c), MacAddress{}, test::ipv4("10.1.0.1")}),
           static_cast<unsigned>(c) % rx_queues);
  }
  run_all();
  for (unsigned q = 0; q < kWorkers; ++q) free_all(clients_->sent(q));  // the ARP replies
  for (int c = 0; c < kClients; ++c) {
    FrameSpec spec =
        FrameSpec::tcp4(FlowKeyV4::from_host(ntohl(client(c)), ntohl(test::ipv4("10.2.0.11")), 5000, 80, ipproto::kTcp), tcpflag::kSyn);
    spec.src_mac = kClient;
    spec.dst_mac = port_a;
    inject(*clients_, build_frame(spec), static_cast<unsigned>(c) % rx_queues);
  }
  run_all();
  // Each translated SYN leaves on the TX queue of the worker that translated it, from that worker's
  // slice; the replies come back on another RX queue than the SYN's worker's, where there are two.
  std::set<std::uint16_t> external_ports;
  const std::uint32_t server = test::ipv4("10.2.0.11"), pool = test::ipv4("10.2.0.100");
  each_sent(*backends_, kWorkers, [&](unsigned q, rte_mbuf* m, const ParsedPacket& out) {
    EXPECT_EQ(out.key4.src_addr, pool);
    const std::uint16_t external = to_host16(out.key4.src_port);
    EXPECT_GE(external, nats[q]->port_first());
    EXPECT_LE(external, nats[q]->port_last());
    EXPECT_EQ(destination_mac(m), kBackend);  // both workers: one learnt the MAC from the board
    external_ports.insert(external);
    FrameSpec reply = FrameSpec::tcp4(FlowKeyV4::from_host(ntohl(server), ntohl(pool), 80, external, ipproto::kTcp),
                                      tcpflag::kSyn | tcpflag::kAck);
    reply.src_mac = kBackend;
    reply.dst_mac = port_b;
    inject(*backends_, build_frame(reply), (q + 1) % rx_queues);
  });
  ASSERT_EQ(external_ports.size(), static_cast<std::size_t>(kClients));
  run_all();
  // Every reply found its session and went back to its client, translated.
  std::set<std::uint32_t> answered;
  each_sent(*clients_, kWorkers, [&](unsigned, rte_mbuf*, const ParsedPacket& back) {
    EXPECT_EQ(to_host16(back.key4.dst_port), 5000);
    answered.insert(back.key4.dst_addr);
  });
  EXPECT_EQ(answered.size(), static_cast<std::size_t>(kClients));
  std::uint64_t handed = 0;
  for (unsigned w = 0; w < kWorkers; ++w) {
    handed += ports[w]->counters().handed_off;
    for (const std::uint64_t d : nats[w]->counters().drops) EXPECT_EQ(d, 0u);
    for (const std::uint64_t d : ports[w]->counters().drops) EXPECT_EQ(d, 0u);
  }
  EXPECT_GT(handed, 0u);  // half the frames came in on a queue their owner does not poll, or near it
  for (auto& p : ports) p->close();
  EXPECT_EQ(group.close(), 0u);
}

TEST_F(DpdkPortsTest, TwoWorkersEachFrameReachesTheWorkerThatOwnsItsSessionWhateverQueueItArrivesOn) { two_nat_workers(2); }

// Records the role each packet arrived with, by its source port, and drops it.
struct ArrivalRecorder {
  std::map<std::uint16_t, PortRole> arrivals;
  template <BurstOutput Out>
  void process_burst(std::span<NfPacket> burst, Out& out) {
    for (NfPacket& packet : burst) {
      arrivals[to_host16(packet.parsed.key4.src_port)] = packet.arrival;
      out.verdict(packet, Verdict::drop);
    }
  }
  std::size_t expire(Nanos, std::size_t) { return 0; }
  NfCounters counters() const { return {}; }
};

// `count` frames from the clients' side that PacketOwner::spread(2) gives worker `owner`, their source
// ports from `first_port` on.
std::vector<std::vector<std::uint8_t>> frames_owned_by(unsigned owner, std::size_t count, const MacAddress& to, std::uint16_t first_port) {
  const PacketOwner spread = PacketOwner::spread(2);
  std::vector<std::vector<std::uint8_t>> frames;
  for (std::uint16_t port = first_port; frames.size() < count; ++port) {
    std::vector<std::uint8_t> frame = tcp_from_client(to, port);
    ParsedPacket parsed;
    EXPECT_EQ(parse_frame(frame, LinkType::ethernet, parsed), ParseStatus::ok);
    if (spread.owner(parsed, 0) == owner) frames.push_back(std::move(frame));
  }
  return frames;
}

// The port's role comes with each packet to the function, whether the worker that serves it took it in
// itself or had it handed over (worker 1 polls no queue here: everything reaches it from worker 0).
TEST_F(DpdkPortsTest, EachPacketCarriesItsPortsRoleToTheWorkerThatServesIt) {
  wire_ports(2, 1);
  config_.ports[0].role = PortRole::clients;
  config_.ports[1].role = PortRole::backends;
  DpdkPortGroup group(config_, 2, PacketOwner::spread(2));
  ASSERT_EQ(group.rx_queues(), 1u);
  DpdkPorts first(group, 0, {}, {}), second(group, 1, {}, {});
  std::uint16_t next_port = 1000;
  for (unsigned owner = 0; owner < 2; ++owner) {
    for (std::size_t port = 0; port < 2; ++port) {
      for (const auto& frame : frames_owned_by(owner, 4, group.mac(port), next_port)) inject(port == 0 ? *clients_ : *backends_, frame);
      next_port += 1000;
    }
  }
  ArrivalRecorder on_first, on_second;
  run(on_first, first);
  run(on_second, second);
  for (const ArrivalRecorder* recorder : {&on_first, &on_second}) {
    EXPECT_EQ(recorder->arrivals.size(), 8u);
    for (const auto& [source_port, role] : recorder->arrivals) {
      // Ports 1000.. and 3000.. were injected on the clients' port, 2000.. and 4000.. on the backends'.
      EXPECT_EQ(role, (source_port / 1000) % 2 == 1 ? PortRole::clients : PortRole::backends) << source_port;
    }
  }
  EXPECT_EQ(second.counters().to_function, 8u);
  EXPECT_EQ(first.counters().handed_off, 8u);
  first.close();
  second.close();
  EXPECT_EQ(group.close(), 0u);
}

// [dataplane] rx_queues = 1 on ports that have a queue for each worker: worker 0 alone polls them and
// hands worker 1 its frames (the software dispatcher, by choice).
TEST_F(DpdkPortsTest, WorkersPastTheConfiguredRxQueuesPollNoneAndGetTheirFramesHandedOver) {
  wire_ports(2, 2);
  config_.rx_queues = 1;
  DpdkPortGroup group(config_, 2, PacketOwner::spread(2));
  ASSERT_EQ(group.rx_queues(), 1u);
  DpdkPorts first(group, 0, {}, {}), second(group, 1, {}, {});
  for (unsigned owner = 0; owner < 2; ++owner) {
    for (const auto& frame : frames_owned_by(owner, 5, group.mac(0), static_cast<std::uint16_t>(1000 + 1000 * owner))) inject(*clients_, frame);
  }
  ArrivalRecorder on_first, on_second;
  run(on_first, first);
  run(on_second, second);
  EXPECT_EQ(on_first.arrivals.size(), 5u);
  EXPECT_EQ(on_second.arrivals.size(), 5u);
  EXPECT_EQ(first.counters().handed_off, 5u);
  EXPECT_EQ(second.counters().rx, 0u);  // it polled nothing
  first.close();
  second.close();
  EXPECT_EQ(group.close(), 0u);
}

// A worker hands another its frames a burst at a time into a ring that holds what the sender's RX
// queues hold. When the owner does not take them in (here it does not run at all), the ring fills: the
// sender backs off, counted, then drops only what still does not fit, counted as handoff_full; every
// mbuf comes back once the owner has run.
TEST_F(DpdkPortsTest, AFullHandoffRingMakesTheSenderBackOffBeforeItDrops) {
  wire_ports(2, 1);
  rte_mempool* wire = rte_pktmbuf_pool_create("wire_handoff", 8191, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  ASSERT_NE(wire, nullptr);
  {
    DpdkPortGroup group(config_, 2, PacketOwner::spread(2));
    const unsigned capacity = rte_ring_get_capacity(group.inbox(1));
    EXPECT_GE(capacity, 2u * 1024);  // one sender's RX descriptors on both ports
    DpdkPorts first(group, 0, {}, {}), second(group, 1, {}, {});
    constexpr unsigned kBeyond = 10;
    const auto frames = frames_owned_by(1, capacity + kBeyond, group.mac(0), 1);
    std::size_t sent = 0;
    ArrivalRecorder dropper;
    while (sent < frames.size()) {  // through the test's RX ring, as fast as worker 0 takes them in
      for (std::size_t k = 0; k < 128 && sent < frames.size(); ++k, ++sent) {
        rte_mbuf* m = rte_pktmbuf_alloc(wire);
        ASSERT_NE(m, nullptr);
        std::memcpy(rte_pktmbuf_append(m, static_cast<std::uint16_t>(frames[sent].size())), frames[sent].data(), frames[sent].size());
        ASSERT_EQ(rte_ring_enqueue(clients_->rx[0], m), 0);
      }
      while (rte_ring_count(clients_->rx[0]) != 0) run(dropper, first);
    }
    const PortCounters& c = first.counters();
    EXPECT_EQ(c.handed_off, capacity);
    EXPECT_EQ(c.drops[static_cast<std::size_t>(PortDrop::handoff_full)], kBeyond);
    EXPECT_GE(c.handoff_backoffs, 1u);
    EXPECT_EQ(dropper.arrivals.size(), 0u);  // worker 0 owns none of them
    ArrivalRecorder owner;
    while (rte_ring_count(group.inbox(1)) != 0) run(owner, second);
    EXPECT_EQ(second.counters().to_function, capacity);
    first.close();
    second.close();
    EXPECT_EQ(group.close(), 0u);
  }
  EXPECT_EQ(rte_mempool_in_use_count(wire), 0u);
  rte_mempool_free(wire);
}

TEST_F(DpdkPortsTest, AWorkerWithoutAnRxQueueGetsEveryFrameItOwnsFromTheOthers) { two_nat_workers(1); }

}  // namespace
}  // namespace flowtrack
