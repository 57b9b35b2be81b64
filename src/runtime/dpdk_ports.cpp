#include "flowtrack/runtime/dpdk_ports.hpp"

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>
#include <thread>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/util/assert.hpp"

namespace flowtrack {
namespace {

// Sized for the rings and the bursts in flight: RX and TX descriptors of two ports, two bursts, the
// per-lcore cache. 2^n - 1 is the mempool's most compact size.
constexpr unsigned kPoolSize = 8191;
constexpr unsigned kPoolCache = 256;
constexpr std::uint16_t kDescriptors = 1024;
// An idle worker (its polls receive nothing) sleeps this long after kIdlePolls empty polls in a row, so
// that a quiet data plane does not hold a core at 100 % (at the price of this much latency for the
// first packet after a pause).
constexpr auto kIdleSleep = std::chrono::microseconds(50);
constexpr unsigned kIdlePolls = 256;
constexpr int kTxAttempts = 4;  // a TX queue that takes part of a burst is offered the rest this often

std::uint8_t* data_of(rte_mbuf* m) { return rte_pktmbuf_mtod(m, std::uint8_t*); }

MacAddress mac_of(std::uint16_t port) {
  rte_ether_addr address{};
  rte_eth_macaddr_get(port, &address);
  MacAddress mac;
  std::memcpy(mac.data(), address.addr_bytes, mac.size());
  return mac;
}

std::string available_ports() {
  std::string names;
  std::uint16_t id = 0;
  RTE_ETH_FOREACH_DEV(id) {
    char name[RTE_ETH_NAME_MAX_LEN];
    if (rte_eth_dev_get_name_by_port(id, name) == 0) names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
  }
  return names.empty() ? "none: give one to EAL, such as --vdev=net_af_packet0,iface=veth0" : names;
}

// Configures and starts `device` with one RX/TX queue pair fed by `pool`; returns its port id.
std::uint16_t start_port(const std::string& device, rte_mempool* pool) {
  std::uint16_t id = 0;
  if (rte_eth_dev_get_port_by_name(device.c_str(), &id) != 0) {
    throw std::runtime_error(fmt::format("no DPDK port named '{}' (ports: {})", device, available_ports()));
  }
  auto check = [&](int rc, const char* what) {
    if (rc < 0) throw std::runtime_error(fmt::format("port {}: {} failed: {}", device, what, rte_strerror(-rc)));
  };
  rte_eth_conf conf{};
  check(rte_eth_dev_configure(id, 1, 1, &conf), "configure");
  std::uint16_t rx_descriptors = kDescriptors, tx_descriptors = kDescriptors;
  check(rte_eth_dev_adjust_nb_rx_tx_desc(id, &rx_descriptors, &tx_descriptors), "descriptor count");
  const int socket = rte_eth_dev_socket_id(id);
  const unsigned node = socket < 0 ? SOCKET_ID_ANY : static_cast<unsigned>(socket);
  check(rte_eth_rx_queue_setup(id, 0, rx_descriptors, node, nullptr, pool), "RX queue setup");
  check(rte_eth_tx_queue_setup(id, 0, tx_descriptors, node, nullptr), "TX queue setup");
  check(rte_eth_dev_start(id), "start");
  // Frames to the function's own addresses carry the port's MAC; promiscuous mode (where the PMD has it)
  // only matters for frames this data plane drops anyway (not_our_mac), so a refusal is not an error.
  rte_eth_promiscuous_enable(id);
  return id;
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
    case PortDrop::count_: break;
  }
  return "unknown";
}

Nanos DpdkPorts::now() {
  return static_cast<Nanos>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

DpdkPorts::DpdkPorts(const DataplaneConfig& config, std::vector<std::uint32_t> owned, std::vector<std::uint32_t> next_hops)
    : next_hops_(std::move(next_hops)) {
  static std::atomic<unsigned> pools{0};  // mempool names are global to the process
  const std::string name = fmt::format("flowtrack_ports{}", pools++);
  pool_ = rte_pktmbuf_pool_create(name.c_str(), kPoolSize, kPoolCache, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  if (pool_ == nullptr) throw std::runtime_error(fmt::format("cannot create the mbuf pool: {}", rte_strerror(rte_errno)));
  try {
    std::vector<Layer2Port> addresses;
    for (const DataplanePortConfig& p : config.ports) {
      ports_.push_back({.id = start_port(p.device, pool_)});
      devices_.push_back(p.device);
      addresses.push_back({mac_of(ports_.back().id), p.address, p.prefix_length, p.gateway});
    }
    layer2_ = Layer2(std::move(addresses), std::move(owned));
    for (const DataplaneNeighbor& n : config.neighbors) layer2_.configure_neighbour(n.address, n.mac);
    for (const DataplanePortConfig& p : config.ports) {
      if (p.gateway != 0) next_hops_.push_back(p.gateway);
    }
    refresh_neighbours(now());
  } catch (...) {
    close();
    throw;
  }
}

DpdkPorts::~DpdkPorts() { close(); }

std::size_t DpdkPorts::mbufs_in_use() const { return pool_ == nullptr ? 0 : rte_mempool_in_use_count(pool_); }

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
    const Nanos t = now();
    std::size_t n = 0;
    for (std::size_t k = 0; k < ports_.size() && n < capacity; ++k) {
      const auto p = static_cast<std::uint16_t>((next_port_ + k) % ports_.size());
      std::array<rte_mbuf*, kMaxBurst> got;
      const std::uint16_t received = rte_eth_rx_burst(ports_[p].id, 0, got.data(), static_cast<std::uint16_t>(capacity - n));
      counters_.rx += received;
      if (received != 0) idle = 0;
      const MacAddress& mine = layer2_.ports()[p].mac;
      for (std::uint16_t i = 0; i < received; ++i) {
        rte_mbuf* m = got[i];
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
        NfPacket& packet = burst[n];
        packet.frame = {data, length};
        packet.capacity = length + rte_pktmbuf_tailroom(m);
        packet.wire_length = rte_pktmbuf_pkt_len(m);
        packet.time = t;
        packet.slot = static_cast<std::uint32_t>(n);
        burst_[n++] = m;
      }
    }
    next_port_ = (next_port_ + 1) % ports_.size();
    burst_size_ = n;
    counters_.to_function += n;
    handed_packets_ = n != 0;
    if (n != 0) return n;
    for (std::uint16_t p = 0; p < ports_.size(); ++p) flush(p);  // ARP replies do not wait for traffic
    if (t >= deadline_) return 0;
    if (++idle >= kIdlePolls) std::this_thread::sleep_for(kIdleSleep);
  }
}

void DpdkPorts::finish_burst() {
  // A packet the loop dropped before the function (it did not parse) had no verdict: freed here.
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
  // A reply may have regrown the frame within the mbuf's room (NfPacket::capacity); a rewrite keeps it.
  FLOWTRACK_ASSERT(packet.frame.data() == data_of(m) && packet.frame.size() <= packet.room(), "the frame stays in its mbuf");
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
  rte_mbuf* m = length <= UINT16_MAX ? rte_pktmbuf_alloc(pool_) : nullptr;
  if (m != nullptr && rte_pktmbuf_append(m, static_cast<std::uint16_t>(length)) != nullptr) return m;
  if (m != nullptr) rte_pktmbuf_free(m);  // no room for `length` bytes in one mbuf
  ++counters_.drops[static_cast<std::size_t>(PortDrop::no_mbuf)];
  return nullptr;
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
  std::uint16_t sent = 0;
  for (int attempt = 0; attempt < kTxAttempts && sent < p.tx_count; ++attempt) {
    sent += rte_eth_tx_burst(p.id, 0, p.tx.data() + sent, static_cast<std::uint16_t>(p.tx_count - sent));
  }
  counters_.tx += sent;
  for (std::size_t i = sent; i < p.tx_count; ++i) drop(p.tx[i], PortDrop::tx_full);
  p.tx_count = 0;
}

void DpdkPorts::drop(rte_mbuf* m, PortDrop reason) {
  ++counters_.drops[static_cast<std::size_t>(reason)];
  rte_pktmbuf_free(m);
}

std::size_t DpdkPorts::close() {
  if (closed_) return missing_at_close_;
  closed_ = true;
  for (const Waiting& w : waiting_) drop(w.mbuf, PortDrop::arp_unresolved);
  waiting_.clear();
  if (!ports_.empty()) finish_burst();
  for (const Port& p : ports_) {
    rte_eth_dev_stop(p.id);
    rte_eth_dev_close(p.id);
  }
  const std::size_t missing = missing_at_close_ = mbufs_in_use();
  // A pool with mbufs still out is left allocated: freeing it would let their later release write into
  // freed memory. The count is the leak, reported by the caller.
  if (missing == 0) rte_mempool_free(pool_);
  pool_ = nullptr;
  return missing;
}

}  // namespace flowtrack
