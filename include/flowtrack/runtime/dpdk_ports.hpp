// A worker's view of a live data plane's DPDK ports (dpdk_port_group.hpp starts them) as the burst
// loop's source and output (runtime/burst_loop.hpp): its RX queue on every port (if it has one), its TX
// queue on every port, and its hand-off ring. This header includes no DPDK header (the mbufs are opaque
// here); dpdk_ports.cpp is the one file that talks to DPDK for it.
//
// Zero copy: next() hands the function each received IPv4 frame where the NIC (or PMD) put it, the
// NfPacket's frame pointing into its mbuf, parsed and its flow hashed (a ParsingSource, burst_loop.hpp:
// the ports read every frame to find its owner, and the function gets what they read; a frame that does
// not parse is dropped here, counted by its parse status); verdict() sends that same mbuf on (rewritten in place by the
// function, its Ethernet addresses by layer 2) or frees it. Only what did not arrive in an mbuf is
// copied into a fresh one: a held packet a function releases (the NAT's fragments), an ARP request.
//
// Each packet the function gets carries the role of the port it arrived on (NfPacket::arrival, from
// [[dataplane.port]] role), whichever worker takes it in: the mbuf keeps its port's id.
//
// Several workers: a received IPv4 frame another worker owns (packet_owner.hpp) goes, mbuf and all, to
// that worker's hand-off ring: gathered per owner while a receive burst is sorted, then put into each
// owner's ring with one enqueue (counted: handed_off), and parsed again by its owner. A ring too full for them makes the sender back
// off (counted once: handoff_backoffs): it yields and offers the rest again until the owner has taken
// enough in or kHandoffPatience has passed, and only then drops what is left (handoff_full). next()
// takes what the others handed this worker before it polls its queues.
//
// Layer 2 (runtime/layer2.hpp): ARP frames never reach the function: requests for owned addresses are
// answered in place (the request's mbuf becomes the reply), senders are learnt, and the message is
// posted on the group's ARP board for the other workers to learn from too. A packet leaves by the port
// its destination routes to, from that port's MAC to its next hop's; an unknown next hop is asked for
// (rate limited) and the packet waits for the answer (at most kMaxWaiting packets, each at most
// kWaitLimit, as a host queues a few packets on an incomplete neighbour entry; beyond that it is
// dropped as `arp_unresolved`).
//
// Every mbuf is either in the current burst (until its verdict; the next next() call frees any the
// function left without one), in a TX buffer (until the burst ends), gathered for a hand-off (until the
// receive burst is sorted), in a hand-off ring, or back in the pool. close() gives back what this worker
// holds; the group's close() then counts the mbufs that did not come back.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flowtrack/nf/dataplane_config.hpp"
#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/packet/link_type.hpp"
#include "flowtrack/runtime/dpdk_port_group.hpp"
#include "flowtrack/runtime/layer2.hpp"

struct rte_mbuf;

namespace flowtrack {

// What the ports dropped or could not send, by reason (the function's drops are its own, NfCounters).
enum class PortDrop : std::uint8_t {
  not_ipv4,        // neither IPv4 nor ARP (IPv6, LLDP, tagged frames): this data plane routes IPv4 only
  not_our_mac,     // an IPv4 frame to another host's MAC (a port in promiscuous mode sees them)
  segmented,       // a frame in several mbufs: longer than one mbuf's room (jumbo frames are not set up)
  bad_arp,         // an ARP frame that does not parse, or not for IPv4 over Ethernet
  no_route,        // a packet to a destination on no port's network, with no gateway
  arp_unresolved,  // a packet whose next hop did not answer ARP in time, or found the waiting room full
  no_mbuf,         // a copy (held packet, ARP request) found no mbuf, or none with room for it
  tx_full,         // the port's TX queue took less than the burst
  handoff_full,    // the owner's hand-off ring stayed full for kHandoffPatience (several workers)
  superseded,      // sent after the run handed its state over (hand_over.hpp): its successor forwards now
  count_,
};
inline constexpr std::size_t kPortDropCount = static_cast<std::size_t>(PortDrop::count_);
std::string_view port_drop_name(PortDrop drop);

struct PortCounters {
  std::uint64_t rx = 0, tx = 0;          // frames, every port, ARP included
  std::uint64_t to_function = 0;         // IPv4 frames handed to the function
  std::uint64_t arp_answered = 0, arp_asked = 0;
  std::uint64_t handed_off = 0;          // IPv4 frames put in another worker's hand-off ring
  std::uint64_t handoff_backoffs = 0;    // times this worker found an owner's ring full and waited for room
  std::array<std::uint64_t, kPortDropCount> drops{};
  std::array<std::uint64_t, kParseStatusCount> parse_drops{};  // IPv4 frames that did not parse, by status
};

class DpdkPorts {
 public:
  static constexpr std::size_t kMaxWaiting = 64;
  static constexpr Nanos kWaitLimit = kNanosPerSecond;
  // The longest a worker waits for room in an owner's full hand-off ring: an owner that runs takes a
  // burst in every few microseconds; one the system has descheduled gets a slice of this core meanwhile.
  static constexpr Nanos kHandoffPatience = 500 * kNanosPerMicro;

  // Worker `worker` of `group`. `owned`: the function's addresses to answer ARP for; `next_hops`:
  // addresses (backends, ...) to resolve before traffic needs them.
  DpdkPorts(DpdkPortGroup& group, unsigned worker, std::vector<std::uint32_t> owned, std::vector<std::uint32_t> next_hops);
  ~DpdkPorts();
  DpdkPorts(const DpdkPorts&) = delete;
  DpdkPorts& operator=(const DpdkPorts&) = delete;

  // How long a tick lasts (runtime/engine.hpp): the worker's function ages by the wall clock, and its
  // mail is handled, at least this often, traffic or not.
  static constexpr Nanos kTick = 100 * kNanosPerMilli;

  // The source (a ticking one, runtime/engine.hpp): the frames handed to this worker, then the received
  // IPv4 frames it owns of every port, up to burst.size(), time-stamped now (the wall clock, Nanos since
  // an arbitrary epoch: the same as now()). Polls until it has some, or returns 0 when the tick is over:
  // after an empty poll, or at once if the call before returned packets (so that ports that never go
  // quiet still let the caller in at every tick), or when the watched flag (watch) is set.
  static constexpr bool kParsesPackets = true;
  LinkType link_type() const { return LinkType::ethernet; }
  std::size_t next(std::span<NfPacket> burst);
  bool done() const { return false; }  // ports run until the worker is told to stop
  // Starts a tick: asks again for next hops due a refresh (Layer2::should_ask), drops the packets that
  // waited kWaitLimit for their next hop, and returns the wall clock.
  Nanos tick();
  // A flag any thread may set to end the current tick at once (the worker's mailbox has mail): next()
  // returns 0 while it is set.
  void watch(const std::atomic<bool>& interrupt) { interrupt_ = &interrupt; }
  // Once `muted` is set, every frame to send is dropped (superseded) instead.
  void mute_when(const std::atomic<bool>& muted) { muted_ = &muted; }
  static Nanos now();

  // The output (a PacketOutput, runtime/burst_loop.hpp).
  void verdict(const NfPacket& packet, Verdict verdict);
  void held(std::span<const std::uint8_t> frame, std::uint32_t wire_length);

  // Gratuitous ARP on every port for every address it answers for (Layer2::announcements), now and
  // kAnnouncements - 1 more times kAnnounceEvery apart (at its ticks: a frame lost on the way goes
  // again): the neighbours and the switches between move those addresses to these ports (a NAT pair's
  // takeover). Counted as ARP requests sent (arp_asked).
  static constexpr unsigned kAnnouncements = 3;
  static constexpr Nanos kAnnounceEvery = 500 * kNanosPerMilli;
  void announce();

  // Asks again for next hops due a refresh (Layer2::should_ask), drops the packets that waited
  // kWaitLimit for their next hop (tick() does it at every tick).
  void refresh_neighbours(Nanos now);

  const PortCounters& counters() const { return counters_; }
  const Layer2& layer2() const { return layer2_; }
  std::size_t port_count() const { return ports_.size(); }
  std::string_view device(std::size_t port) const { return group_.device(port); }

  // Sends what is buffered, frees the packets this worker holds (the current burst, those waiting for a
  // next hop). The ports keep running for the other workers; the group stops them. Later calls do nothing.
  void close();

 private:
  struct Port {
    std::uint16_t id = 0;
    PortRole role = PortRole::unknown;
    std::uint16_t tx_count = 0;
    std::array<rte_mbuf*, kMaxBurst> tx;  // to send at the end of the burst, or once full
  };
  // The frames of one receive burst for one owner (a burst holds at most kMaxBurst).
  struct Handoff {
    std::uint16_t count = 0;
    std::array<rte_mbuf*, kMaxBurst> mbufs;
  };

  void finish_burst();
  void flush(std::uint16_t port);
  std::size_t take_handed(std::span<NfPacket> burst, Nanos now);  // from the hand-off ring into the burst
  // Fills `packet` (the burst's next slot) from `mbuf` and parses it; false: it did not parse (counted,
  // freed).
  bool parse(NfPacket& packet, rte_mbuf* mbuf, PortRole arrival, Nanos now);
  PortRole role_of(std::uint16_t port_id) const;
  bool hand_off(rte_mbuf* mbuf, const ParsedPacket& parsed);      // true: another worker owns it (gathered)
  void send_handoffs();                                            // the gathered frames into their owners' rings
  void learn_from_board();                                         // the others' ARP messages
  void receive_arp(std::uint16_t port, rte_mbuf* mbuf, Nanos now);  // answers in the same mbuf, or frees it
  void send(rte_mbuf* mbuf, std::size_t l3_offset);               // routes, then transmits, waits or frees
  void transmit(rte_mbuf* mbuf, const Egress& egress, const MacAddress& next_hop);  // layer 2, TX buffer
  void wait_for_neighbour(rte_mbuf* mbuf, const Egress& egress);   // asks for its MAC; waits or drops
  void enqueue(std::uint16_t port, rte_mbuf* mbuf);                // into the TX buffer (flushed when full)
  void release_waiting();                                          // those whose next hop is now known
  void ask(std::uint32_t address, Nanos now);
  void send_announcements(Nanos now);  // one round of announce()'s
  rte_mbuf* fresh(std::size_t length);  // a new mbuf of `length` bytes, or null (counted: no_mbuf)
  void drop(rte_mbuf* mbuf, PortDrop reason);

  DpdkPortGroup& group_;
  unsigned worker_;
  bool polls_ports_;  // it has an RX queue on every port (worker < group.rx_queues())
  Layer2 layer2_;
  std::vector<Port> ports_;
  std::vector<std::uint32_t> next_hops_;
  struct Waiting {
    rte_mbuf* mbuf;
    Egress egress;
    Nanos since;
  };
  std::vector<Waiting> waiting_;  // for their next hop's MAC, oldest first
  std::vector<Handoff> handoffs_;  // by owner; empty between receive bursts
  std::array<rte_mbuf*, kMaxBurst> burst_{};  // the current burst's mbufs, by NfPacket::slot; null once decided
  std::size_t burst_size_ = 0;
  std::size_t next_port_ = 0;  // the port polled first next time, so no port starves the other
  std::uint64_t board_seen_ = 0;  // ARP board messages learnt from
  unsigned announcements_left_ = 0;  // gratuitous ARP rounds still to send (announce)
  Nanos next_announcement_ = 0;
  Nanos deadline_ = 0;  // the current tick's end
  bool handed_packets_ = false;  // the last next() returned packets
  const std::atomic<bool>* interrupt_ = nullptr;
  const std::atomic<bool>* muted_ = nullptr;
  PortCounters counters_;
  bool closed_ = false;
};

}  // namespace flowtrack
