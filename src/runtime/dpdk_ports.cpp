#include "flowtrack/runtime/dpdk_ports.hpp"

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>
#include <thread>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/util/assert.hpp"

namespace flowtrack {
namespace {

// An idle worker (its polls receive nothing) sleeps this long after kIdlePolls empty polls in a row, so
// that a quiet data plane does not hold a core at 100 % (at the price of this much latency for the
// first packet after a pause).
constexpr auto kIdleSleep = std::chrono::microseconds(50);
constexpr unsigned kIdlePolls = 256;
constexpr int kTxAttempts = 4;  // a TX queue that takes part of a burst is offered the rest this often

std::uint8_t* data_of(rte_mbuf* m) { return rte_pktmbuf_mtod(m, std::uint8_t*); }

// As DPDK's l3fwd does: while the frames of a receive burst are sorted, the first bytes of the one
// kPrefetchAhead further on are fetched (the first kPrefetchAhead before the sorting starts), so that a
// frame a NIC wrote to memory is in the cache by the time its headers are read.
constexpr unsigned kPrefetchAhead = 3;
void prefetch_first(rte_mbuf* const* mbufs, unsigned count) {
  for (unsigned i = 0; i < count && i < kPrefetchAhead; ++i) rte_prefetch0(data_of(mbufs[i]));
}
void prefetch_after(rte_mbuf* const* mbufs, unsigned i, unsigned count) {
  if (i + kPrefetchAhead < count) rte_prefetch0(data_of(mbufs[i + kPrefetchAhead]));
}

}  // namespace

std::string_view port_drop_name(PortDrop drop) {
  switch (drop) {
    case PortDrop::not_ipv4: return "not_ipv4";
    case PortDrop::not_our_mac: return "not_our_mac";
    case PortDrop::segmented: return "segmented";
    case PortDrop::bad_arp: return "bad_arp";
    case PortDrop::no_route: return "no_route";
    case PortDrop::arp_unresolved: return "arp_unresolved";
    case PortDrop::no_mbuf: return "no_mbuf";
    case PortDrop::tx_full: return "tx_full";
    case PortDrop::handoff_full: return "handoff_full";
    case PortDrop::superseded: return "superseded";
    case PortDrop::count_: break;
  }
  return "unknown";
}

Nanos DpdkPorts::now() {
  return static_cast<Nanos>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

DpdkPorts::DpdkPorts(DpdkPortGroup& group, unsigned worker, std::vector<std::uint32_t> owned, std::vector<std::uint32_t> next_hops)
    : group_(group), worker_(worker), polls_ports_(worker < group.rx_queues()), next_hops_(std::move(next_hops)) {
  const DataplaneConfig& config = group.config();
  std::vector<Layer2Port> addresses;
  for (std::size_t p = 0; p < config.ports.size(); ++p) {
    ports_.push_back({.id = group.port_id(p), .role = config.ports[p].role});
    addresses.push_back({group.mac(p), config.ports[p].address, config.ports[p].prefix_length, config.ports[p].gateway});
  }
  layer2_ = Layer2(std::move(addresses), std::move(owned));
  for (const DataplaneNeighbor& n : config.neighbors) layer2_.configure_neighbour(n.address, n.mac);
  for (const DataplanePortConfig& p : config.ports) {
    if (p.gateway != 0) next_hops_.push_back(p.gateway);
  }
  // One entry per next hop (many addresses share a gateway, many connections a host), each routed: the
  // list is walked at every tick.
  for (std::uint32_t& address : next_hops_) {
    const auto egress = layer2_.route(address);
    address = egress ? egress->next_hop : 0;
  }
  std::ranges::sort(next_hops_);
  next_hops_.erase(std::unique(next_hops_.begin(), next_hops_.end()), next_hops_.end());
  std::erase(next_hops_, 0u);
  if (group.workers() > 1) handoffs_.resize(group.workers());
  refresh_neighbours(now());
}

DpdkPorts::~DpdkPorts() { close(); }

std::size_t DpdkPorts::next(std::span<NfPacket> burst) {
  finish_burst();
  const std::size_t capacity = std::min(burst.size(), kMaxBurst);
  unsigned idle = 0;
  // A port that never goes quiet still lets the caller in at every deadline.
  if (handed_packets_ && now() >= deadline_) {
    handed_packets_ = false;
    return 0;
  }
  for (;;) {
    if (interrupt_ != nullptr && interrupt_->load(std::memory_order_relaxed)) return 0;
    const Nanos t = now();
    if (group_.arp_board().has_news(board_seen_)) learn_from_board();
    std::size_t n = take_handed(burst.first(capacity), t);
    if (n != 0) idle = 0;
    for (std::size_t k = 0; polls_ports_ && k < ports_.size() && n < capacity; ++k) {
      const auto p = static_cast<std::uint16_t>((next_port_ + k) % ports_.size());
      std::array<rte_mbuf*, kMaxBurst> got;
      const std::uint16_t received =
          rte_eth_rx_burst(ports_[p].id, static_cast<std::uint16_t>(worker_), got.data(), static_cast<std::uint16_t>(capacity - n));
      counters_.rx += received;
      if (received != 0) idle = 0;
      const MacAddress& mine = layer2_.ports()[p].mac;
      prefetch_first(got.data(), received);
      for (std::uint16_t i = 0; i < received; ++i) {
        prefetch_after(got.data(), i, received);
        rte_mbuf* m = got[i];
        m->port = ports_[p].id;  // the port it came by, whose role goes with it (not every PMD sets it)
        std::uint8_t* data = data_of(m);
        const std::uint16_t length = rte_pktmbuf_data_len(m);
        if (m->nb_segs != 1) {
          drop(m, PortDrop::segmented);
          continue;
        }
        const std::uint16_t type = length >= kEthernetHeaderSize ? load_be16(data + kEtherTypeOffset) : 0;
        if (type == kEtherTypeArp) {
          receive_arp(p, m, t);
          continue;
        }
        if (type != kEtherTypeIpv4) {
          drop(m, PortDrop::not_ipv4);
          continue;
        }
        if (std::memcmp(data, mine.data(), mine.size()) != 0) {
          drop(m, PortDrop::not_our_mac);
          continue;
        }
        // Parsed where it will be served, if it is this worker's: what the owner was read from is what
        // the function gets.
        NfPacket& packet = burst[burst_size_];
        if (!parse(packet, m, ports_[p].role, t)) continue;
        if (hand_off(m, packet.parsed)) continue;
        burst_[burst_size_++] = m;
        ++n;
      }
      send_handoffs();
    }
    next_port_ = (next_port_ + 1) % ports_.size();
    counters_.to_function += n;
    handed_packets_ = n != 0;
    if (n != 0) return n;
    for (std::uint16_t p = 0; p < ports_.size(); ++p) flush(p);  // ARP replies do not wait for traffic
    if (t >= deadline_) return 0;
    if (++idle >= kIdlePolls) std::this_thread::sleep_for(kIdleSleep);
  }
}

bool DpdkPorts::parse(NfPacket& packet, rte_mbuf* m, PortRole arrival, Nanos now) {
  const std::uint16_t length = rte_pktmbuf_data_len(m);
  packet.frame = {data_of(m), length};
  const ParseStatus status = parse_frame(packet.frame, LinkType::ethernet, packet.parsed);
  if (status != ParseStatus::ok) {
    ++counters_.parse_drops[static_cast<std::size_t>(status)];
    rte_pktmbuf_free(m);
    return false;
  }
  packet.hash = packet_hash(packet.parsed);
  packet.capacity = length + rte_pktmbuf_tailroom(m);
  packet.headroom = rte_pktmbuf_headroom(m);
  packet.wire_length = rte_pktmbuf_pkt_len(m);
  packet.time = now;
  packet.slot = static_cast<std::uint32_t>(burst_size_);
  packet.arrival = arrival;
  return true;
}

PortRole DpdkPorts::role_of(std::uint16_t port_id) const {
  for (const Port& p : ports_) {
    if (p.id == port_id) return p.role;
  }
  return PortRole::unknown;
}

std::size_t DpdkPorts::take_handed(std::span<NfPacket> burst, Nanos now) {
  if (group_.workers() == 1) return 0;
  std::array<rte_mbuf*, kMaxBurst> got;
  const unsigned taken = rte_ring_dequeue_burst(group_.inbox(worker_), reinterpret_cast<void**>(got.data()),
                                                static_cast<unsigned>(burst.size()), nullptr);
  // Parsed again here: what the sender read travels no further than its own burst.
  const std::size_t before = burst_size_;
  prefetch_first(got.data(), taken);
  for (unsigned i = 0; i < taken; ++i) {
    prefetch_after(got.data(), i, taken);
    if (parse(burst[burst_size_], got[i], role_of(got[i]->port), now)) burst_[burst_size_++] = got[i];
  }
  return burst_size_ - before;
}

bool DpdkPorts::hand_off(rte_mbuf* m, const ParsedPacket& parsed) {
  const PacketOwner& owner = group_.owner();
  if (handoffs_.empty() || owner.rule() == PacketOwner::Rule::where_received) return false;
  const unsigned to = owner.owner(parsed, worker_);
  if (to == worker_) return false;
  Handoff& h = handoffs_[to];
  h.mbufs[h.count++] = m;  // a receive burst brings at most kMaxBurst frames: send_handoffs() follows it
  return true;
}

void DpdkPorts::send_handoffs() {
  for (unsigned to = 0; to < handoffs_.size(); ++to) {
    Handoff& h = handoffs_[to];
    if (h.count == 0) continue;
    rte_ring* inbox = group_.inbox(to);
    const auto offer = [&](unsigned from) {
      return rte_ring_enqueue_burst(inbox, reinterpret_cast<void* const*>(h.mbufs.data() + from), h.count - from, nullptr);
    };
    unsigned sent = offer(0);
    if (sent < h.count) {
      // Back off: the owner takes a burst in at every poll; this worker gives up its core meanwhile,
      // which the owner may be waiting for.
      ++counters_.handoff_backoffs;
      const Nanos give_up = now() + kHandoffPatience;
      do {
        std::this_thread::yield();
        sent += offer(sent);
      } while (sent < h.count && now() < give_up);
    }
    counters_.handed_off += sent;
    for (unsigned i = sent; i < h.count; ++i) drop(h.mbufs[i], PortDrop::handoff_full);
    h.count = 0;
  }
}

void DpdkPorts::learn_from_board() {
  const Nanos t = now();
  group_.arp_board().read_since(board_seen_, [&](const ArpBoard::Posted& posted) {
    layer2_.on_arp(posted.port, posted.message, t);  // the reply, if any, was sent by the receiver
  });
  if (!waiting_.empty()) release_waiting();
}

void DpdkPorts::finish_burst() {
  // Every packet of a burst gets its verdict (network_function.hpp); one left without is not lost.
  for (std::size_t i = 0; i < burst_size_; ++i) {
    if (burst_[i] != nullptr) rte_pktmbuf_free(burst_[i]);
    burst_[i] = nullptr;
  }
  burst_size_ = 0;
  for (std::uint16_t p = 0; p < ports_.size(); ++p) flush(p);
}

void DpdkPorts::verdict(const NfPacket& packet, Verdict verdict) {
  FLOWTRACK_ASSERT(packet.slot < burst_size_ && burst_[packet.slot] != nullptr, "one verdict per packet of the burst");
  rte_mbuf* m = burst_[packet.slot];
  burst_[packet.slot] = nullptr;
  if (verdict == Verdict::drop || verdict == Verdict::held) {  // a held packet lives on as the function's copy
    rte_pktmbuf_free(m);
    return;
  }
  // A reply may have regrown the frame within the mbuf's room after it (NfPacket::capacity), a tunnel's
  // headers may have started it earlier, within the mbuf's headroom (NfPacket::headroom).
  const std::ptrdiff_t moved_down = data_of(m) - packet.frame.data();
  FLOWTRACK_ASSERT(moved_down >= 0 && moved_down <= rte_pktmbuf_headroom(m) && packet.frame.size() <= packet.room(),
                   "the frame stays in its mbuf");
  m->data_off = static_cast<std::uint16_t>(m->data_off - moved_down);
  m->data_len = static_cast<std::uint16_t>(packet.frame.size());
  m->pkt_len = static_cast<std::uint32_t>(packet.frame.size());
  send(m, packet.parsed.l3_offset);
}

void DpdkPorts::held(std::span<const std::uint8_t> frame, std::uint32_t) {
  rte_mbuf* m = fresh(frame.size());
  if (m == nullptr) return;
  std::memcpy(data_of(m), frame.data(), frame.size());
  ParsedPacket parsed;
  if (parse_frame(frame, LinkType::ethernet, parsed) != ParseStatus::ok) {
    drop(m, PortDrop::not_ipv4);
    return;
  }
  send(m, parsed.l3_offset);
}

void DpdkPorts::send(rte_mbuf* m, std::size_t l3_offset) {
  std::uint8_t* data = data_of(m);
  if (rte_pktmbuf_data_len(m) < l3_offset + 20 || data[l3_offset] >> 4 != 4) {
    drop(m, PortDrop::not_ipv4);
    return;
  }
  std::uint32_t destination;
  std::memcpy(&destination, data + l3_offset + 16, 4);
  const auto egress = layer2_.route(destination);
  if (!egress) {
    drop(m, PortDrop::no_route);
    return;
  }
  if (const MacAddress* mac = layer2_.neighbour(egress->next_hop)) {
    transmit(m, *egress, *mac);
    return;
  }
  wait_for_neighbour(m, *egress);
}

[[gnu::cold]] void DpdkPorts::wait_for_neighbour(rte_mbuf* m, const Egress& egress) {
  const Nanos t = now();
  ask(egress.next_hop, t);
  if (waiting_.size() == kMaxWaiting) {
    drop(m, PortDrop::arp_unresolved);
    return;
  }
  waiting_.push_back({m, egress, t});
}

void DpdkPorts::transmit(rte_mbuf* m, const Egress& egress, const MacAddress& next_hop) {
  std::uint8_t* data = data_of(m);
  std::memcpy(data, next_hop.data(), next_hop.size());
  std::memcpy(data + kEthernetSourceOffset, layer2_.ports()[egress.port].mac.data(), next_hop.size());
  enqueue(egress.port, m);
}

void DpdkPorts::enqueue(std::uint16_t port, rte_mbuf* m) {
  Port& p = ports_[port];
  if (p.tx_count == kMaxBurst) flush(port);
  p.tx[p.tx_count++] = m;
}

void DpdkPorts::release_waiting() {
  std::erase_if(waiting_, [&](const Waiting& w) {
    const MacAddress* mac = layer2_.neighbour(w.egress.next_hop);
    if (mac != nullptr) transmit(w.mbuf, w.egress, *mac);
    return mac != nullptr;
  });
}

void DpdkPorts::receive_arp(std::uint16_t port, rte_mbuf* m, Nanos now) {
  const auto message = parse_arp({data_of(m), rte_pktmbuf_data_len(m)});
  if (!message) {
    drop(m, PortDrop::bad_arp);
    return;
  }
  const auto reply = layer2_.on_arp(port, *message, now);
  if (group_.workers() > 1) group_.arp_board().post({port, *message, now});
  if (!waiting_.empty()) release_waiting();  // the message may have taught us a next hop they wait for
  // The request's mbuf becomes the reply (padded to the Ethernet minimum: a veth hands over 42 bytes).
  if (!reply || (rte_pktmbuf_data_len(m) < kArpFrameSize &&
                 rte_pktmbuf_append(m, static_cast<std::uint16_t>(kArpFrameSize - rte_pktmbuf_data_len(m))) == nullptr)) {
    rte_pktmbuf_free(m);
    return;
  }
  write_arp({data_of(m), kArpFrameSize}, message->sender_mac, layer2_.ports()[port].mac, *reply);
  m->data_len = kArpFrameSize;
  m->pkt_len = kArpFrameSize;
  ++counters_.arp_answered;
  enqueue(port, m);
}

void DpdkPorts::ask(std::uint32_t address, Nanos now) {
  const auto egress = layer2_.route(address);
  if (!egress || !layer2_.should_ask(address, now)) return;
  rte_mbuf* m = fresh(kArpFrameSize);
  if (m == nullptr) return;
  write_arp({data_of(m), kArpFrameSize}, kBroadcastMac, layer2_.ports()[egress->port].mac, layer2_.request(egress->port, address));
  ++counters_.arp_asked;
  enqueue(egress->port, m);
}

rte_mbuf* DpdkPorts::fresh(std::size_t length) {
  rte_mbuf* m = length <= UINT16_MAX ? rte_pktmbuf_alloc(group_.pool()) : nullptr;
  if (m != nullptr && rte_pktmbuf_append(m, static_cast<std::uint16_t>(length)) != nullptr) return m;
  if (m != nullptr) rte_pktmbuf_free(m);  // no room for `length` bytes in one mbuf
  ++counters_.drops[static_cast<std::size_t>(PortDrop::no_mbuf)];
  return nullptr;
}

void DpdkPorts::announce() {
  announcements_left_ = kAnnouncements;
  send_announcements(now());
}

void DpdkPorts::send_announcements(Nanos now) {
  for (std::uint16_t p = 0; p < ports_.size(); ++p) {
    for (const ArpMessage& message : layer2_.announcements(p)) {
      rte_mbuf* m = fresh(kArpFrameSize);
      if (m == nullptr) return;
      write_arp({data_of(m), kArpFrameSize}, kBroadcastMac, layer2_.ports()[p].mac, message);
      ++counters_.arp_asked;
      enqueue(p, m);
    }
    flush(p);
  }
  --announcements_left_;
  next_announcement_ = now + kAnnounceEvery;
}

Nanos DpdkPorts::tick() {
  const Nanos t = now();
  if (announcements_left_ != 0 && t >= next_announcement_) send_announcements(t);
  refresh_neighbours(t);
  deadline_ = t + kTick;
  return t;
}

void DpdkPorts::refresh_neighbours(Nanos now) {
  std::erase_if(waiting_, [&](const Waiting& w) {
    if (now - w.since < kWaitLimit) return false;
    drop(w.mbuf, PortDrop::arp_unresolved);
    return true;
  });
  for (const std::uint32_t address : next_hops_) {
    if (const auto egress = layer2_.route(address)) ask(egress->next_hop, now);
  }
  for (std::uint16_t p = 0; p < ports_.size(); ++p) flush(p);
}

void DpdkPorts::flush(std::uint16_t port) {
  Port& p = ports_[port];
  if (muted_ != nullptr && muted_->load(std::memory_order_acquire)) {
    for (std::size_t i = 0; i < p.tx_count; ++i) drop(p.tx[i], PortDrop::superseded);
    p.tx_count = 0;
    return;
  }
  std::uint16_t sent = 0;
  for (int attempt = 0; attempt < kTxAttempts && sent < p.tx_count; ++attempt) {
    sent += rte_eth_tx_burst(p.id, static_cast<std::uint16_t>(worker_), p.tx.data() + sent, static_cast<std::uint16_t>(p.tx_count - sent));
  }
  counters_.tx += sent;
  for (std::size_t i = sent; i < p.tx_count; ++i) drop(p.tx[i], PortDrop::tx_full);
  p.tx_count = 0;
}

void DpdkPorts::drop(rte_mbuf* m, PortDrop reason) {
  ++counters_.drops[static_cast<std::size_t>(reason)];
  rte_pktmbuf_free(m);
}

void DpdkPorts::close() {
  if (closed_) return;
  closed_ = true;
  for (const Waiting& w : waiting_) drop(w.mbuf, PortDrop::arp_unresolved);
  waiting_.clear();
  finish_burst();
}

}  // namespace flowtrack
