#include "flowtrack/runtime/dpdk_port_group.hpp"

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <fmt/format.h>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "flowtrack/nf/network_function.hpp"

namespace flowtrack {
namespace {

constexpr std::uint16_t kDescriptors = 1024;
constexpr unsigned kPoolCache = 256;
// The largest hand-off ring: with many workers, what all the others' RX rings hold is more than one
// worker would ever wait to take in.
constexpr unsigned kMaxInbox = 1u << 16;

// A worker's hand-off ring holds what the RX rings of every other worker that polls the ports can hold
// (`rx_frames`: one worker's RX descriptors on all ports), so that when the NIC or the kernel's fanout
// puts one owner's traffic on the others' queues, all of it fits while the owner catches up. rte_ring's
// size is a power of two and it holds one less; a worker no one hands to gets the smallest ring.
unsigned inbox_size(unsigned worker, unsigned rx_queues, std::size_t rx_frames) {
  const unsigned senders = rx_queues - (worker < rx_queues ? 1 : 0);
  const std::size_t frames = std::max<std::size_t>(std::size_t{senders} * rx_frames, kMaxBurst);
  return std::min(rte_align32pow2(static_cast<std::uint32_t>(std::min<std::size_t>(frames, kMaxInbox - 1) + 1)), kMaxInbox);
}

// Enough mbufs for every descriptor ring, every worker's bursts, TX buffers, hand-off ring (`inboxes`
// slots in all) and waiting room, and the per-lcore cache; at least the one-worker pool of 8191 (2^n - 1
// is the mempool's most compact size).
unsigned pool_size(std::size_t rx_frames, std::size_t tx_frames, std::size_t ports, unsigned rx_queues, unsigned workers,
                   std::size_t inboxes) {
  const std::size_t need = std::size_t{rx_queues} * rx_frames + std::size_t{workers} * tx_frames + inboxes +
                           std::size_t{workers} * ((ports + 2) * kMaxBurst + 64) + kPoolCache;
  unsigned size = 8191;
  while (size < need) size = size * 2 + 1;
  return size;
}

// The symmetric Toeplitz key: a 16-bit pattern repeated, so that swapping source and destination (both
// addresses and ports) leaves the hash unchanged and both directions land on one queue.
constexpr std::uint8_t kSymmetricKeyByte[2] = {0x6d, 0x5a};
constexpr std::size_t kToeplitzKeySize = 40;

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

std::uint16_t port_by_name(const std::string& device) {
  std::uint16_t id = 0;
  if (rte_eth_dev_get_port_by_name(device.c_str(), &id) != 0) {
    throw std::runtime_error(fmt::format("no DPDK port named '{}' (ports: {})", device, available_ports()));
  }
  return id;
}

void check(int rc, const std::string& device, const char* what) {
  if (rc < 0) throw std::runtime_error(fmt::format("port {}: {} failed: {}", device, what, rte_strerror(-rc)));
}

// How many RX queues `device` can give `workers` workers; it must give each a TX queue.
std::uint16_t rx_queues_of(std::uint16_t id, const std::string& device, unsigned workers) {
  rte_eth_dev_info info{};
  check(rte_eth_dev_info_get(id, &info), device, "device info");
  if (info.max_tx_queues < workers) {
    throw std::runtime_error(fmt::format("port {} has {} TX queue(s); {} workers need one each (net_af_packet: qpairs={})",
                                         device, info.max_tx_queues, workers, workers));
  }
  return static_cast<std::uint16_t>(std::min<unsigned>(workers, std::max<unsigned>(info.max_rx_queues, 1)));
}

// The RX and TX descriptors of each queue of `device`: kDescriptors as the PMD takes them.
std::pair<std::uint16_t, std::uint16_t> descriptors_of(std::uint16_t id, const std::string& device) {
  std::uint16_t rx_descriptors = kDescriptors, tx_descriptors = kDescriptors;
  check(rte_eth_dev_adjust_nb_rx_tx_desc(id, &rx_descriptors, &tx_descriptors), device, "descriptor count");
  return {rx_descriptors, tx_descriptors};
}

// Configures and starts `device` with `rx_queues` RX queues (RSS over them where the PMD hashes) and
// one TX queue per worker, fed by `pool`.
void start_port(std::uint16_t id, const std::string& device, std::uint16_t rx_queues, unsigned workers, rte_mempool* pool) {
  rte_eth_dev_info info{};
  check(rte_eth_dev_info_get(id, &info), device, "device info");
  rte_eth_conf conf{};
  std::uint8_t key[kToeplitzKeySize];
  for (std::size_t i = 0; i < kToeplitzKeySize; ++i) key[i] = kSymmetricKeyByte[i % 2];
  const std::uint64_t hashed = info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP);
  if (rx_queues > 1 && hashed != 0) {
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rx_adv_conf.rss_conf.rss_hf = hashed;
    if (info.hash_key_size == kToeplitzKeySize) {
      conf.rx_adv_conf.rss_conf.rss_key = key;
      conf.rx_adv_conf.rss_conf.rss_key_len = kToeplitzKeySize;
    }
  }
  check(rte_eth_dev_configure(id, rx_queues, static_cast<std::uint16_t>(workers), &conf), device, "configure");
  const auto [rx_descriptors, tx_descriptors] = descriptors_of(id, device);
  const int socket = rte_eth_dev_socket_id(id);
  const unsigned node = socket < 0 ? SOCKET_ID_ANY : static_cast<unsigned>(socket);
  for (std::uint16_t q = 0; q < rx_queues; ++q) check(rte_eth_rx_queue_setup(id, q, rx_descriptors, node, nullptr, pool), device, "RX queue setup");
  for (std::uint16_t q = 0; q < workers; ++q) check(rte_eth_tx_queue_setup(id, q, tx_descriptors, node, nullptr), device, "TX queue setup");
  check(rte_eth_dev_start(id), device, "start");
  // Frames to the function's own addresses carry the port's MAC; promiscuous mode (where the PMD has it)
  // only matters for frames this data plane drops anyway (not_our_mac), so a refusal is not an error.
  rte_eth_promiscuous_enable(id);
}

}  // namespace

DpdkPortGroup::DpdkPortGroup(const DataplaneConfig& config, unsigned workers, PacketOwner owner)
    : config_(config), workers_(std::max(workers, 1u)), owner_(std::move(owner)) {
  static std::atomic<unsigned> groups{0};  // mempool and ring names are global to the process
  const unsigned group = groups++;
  std::vector<std::uint16_t> ids;
  rx_queues_ = static_cast<std::uint16_t>(config.rx_queues == 0 ? workers_ : std::min(workers_, config.rx_queues));
  std::size_t rx_frames = 0, tx_frames = 0;  // one queue's descriptors, summed over the ports
  for (const DataplanePortConfig& p : config.ports) {
    ids.push_back(port_by_name(p.device));
    rx_queues_ = std::min(rx_queues_, rx_queues_of(ids.back(), p.device, workers_));
    const auto [rx_descriptors, tx_descriptors] = descriptors_of(ids.back(), p.device);
    rx_frames += rx_descriptors;
    tx_frames += tx_descriptors;
  }
  if (owner_.rule() == PacketOwner::Rule::spread && rx_queues_ == workers_) owner_ = PacketOwner{};
  // One worker hands nothing over: no rings.
  std::vector<unsigned> inbox_sizes;
  for (unsigned w = 0; workers_ > 1 && w < workers_; ++w) inbox_sizes.push_back(inbox_size(w, rx_queues_, rx_frames));
  const std::size_t inbox_slots = std::accumulate(inbox_sizes.begin(), inbox_sizes.end(), std::size_t{0});
  const std::string pool_name = fmt::format("flowtrack_ports{}", group);
  const std::size_t mbufs = std::max<std::size_t>(pool_size(rx_frames, tx_frames, ids.size(), rx_queues_, workers_, inbox_slots), config.mbufs);
  pool_ = rte_pktmbuf_pool_create(pool_name.c_str(), static_cast<unsigned>(mbufs), kPoolCache, 0,
                                  static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + config.mbuf_size), SOCKET_ID_ANY);
  if (pool_ == nullptr) {
    throw std::runtime_error(fmt::format("cannot create the mbuf pool ({} mbufs of {} bytes): {}", mbufs, config.mbuf_size, rte_strerror(rte_errno)));
  }
  try {
    for (unsigned w = 0; w < inbox_sizes.size(); ++w) {
      const std::string name = fmt::format("flowtrack_in{}_{}", group, w);
      inboxes_.push_back(rte_ring_create(name.c_str(), inbox_sizes[w], SOCKET_ID_ANY, RING_F_SC_DEQ));
      if (inboxes_.back() == nullptr) throw std::runtime_error(fmt::format("cannot create a hand-off ring: {}", rte_strerror(rte_errno)));
    }
    for (std::size_t p = 0; p < ids.size(); ++p) {
      start_port(ids[p], config.ports[p].device, rx_queues_, workers_, pool_);
      ports_.push_back({ids[p], mac_of(ids[p])});
    }
  } catch (...) {
    close();
    throw;
  }
}

DpdkPortGroup::~DpdkPortGroup() { close(); }

std::size_t DpdkPortGroup::mbufs_in_use() const { return pool_ == nullptr ? 0 : rte_mempool_in_use_count(pool_); }

std::size_t DpdkPortGroup::discard_received(unsigned worker) {
  if (worker >= rx_queues_) return 0;
  // At most what a queue can have waited with (a NIC's descriptors, af_packet's ring: far less than
  // this): a port that never goes quiet (net_null) is not emptied, its frames are as new as the state.
  constexpr std::size_t kMostWaiting = 65536;
  std::size_t discarded = 0;
  std::array<rte_mbuf*, 64> frames;
  for (const Port& p : ports_) {
    std::size_t from_port = 0;
    for (std::uint16_t n; from_port < kMostWaiting &&
                          (n = rte_eth_rx_burst(p.id, static_cast<std::uint16_t>(worker), frames.data(), frames.size())) != 0;) {
      rte_pktmbuf_free_bulk(frames.data(), n);
      from_port += n;
    }
    discarded += from_port;
  }
  return discarded;
}

std::size_t DpdkPortGroup::close() {
  if (closed_) return missing_at_close_;
  closed_ = true;
  for (rte_ring* inbox : inboxes_) {
    if (inbox == nullptr) continue;
    void* m = nullptr;
    while (rte_ring_dequeue(inbox, &m) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
    rte_ring_free(inbox);
  }
  inboxes_.clear();
  for (const Port& p : ports_) {
    rte_eth_dev_stop(p.id);
    rte_eth_dev_close(p.id);
  }
  const std::size_t missing = missing_at_close_ = mbufs_in_use();
  // A pool with mbufs still out is left allocated: freeing it would let their later release write into
  // freed memory. The count is the leak, reported by the caller.
  if (missing == 0 && pool_ != nullptr) rte_mempool_free(pool_);
  pool_ = nullptr;
  return missing;
}

}  // namespace flowtrack
