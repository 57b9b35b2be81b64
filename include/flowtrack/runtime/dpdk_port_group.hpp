// The devices of a live data plane, shared by its workers (each drives them through a DpdkPorts of its
// own, dpdk_ports.hpp):
//  - every port of [dataplane] started with one TX queue per worker and as many RX queues as the PMD
//    has, up to one per worker and up to [dataplane] rx_queues; RSS with the symmetric key where the
//    PMD hashes, so that both directions of a connection land on one queue (net_af_packet spreads by
//    the kernel's fanout over its `qpairs=N` sockets instead). A worker past the ports' RX queues
//    receives only what the others hand it: the software dispatcher for PMDs with one queue;
//  - the packets' owners (packet_owner.hpp) and, with several workers, one hand-off ring per worker,
//    multi-producer, into which any worker puts the packets another owns; each holds what the RX
//    descriptors of all the other workers' queues hold (at most 65536 frames), so that an owner whose
//    traffic the NIC puts on the others' queues can take it all in as it catches up;
//  - one mbuf pool (thread-safe: a worker thread that is not an EAL lcore has no per-lcore cache) of
//    what the ports need or [dataplane] mbufs, whichever is more, each mbuf with room for mbuf_size bytes;
//  - the ARP board (arp_board.hpp).
// This header includes no DPDK header; dpdk_port_group.cpp and dpdk_ports.cpp are the files that talk
// to DPDK.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flowtrack/nf/dataplane_config.hpp"
#include "flowtrack/packet/mac_address.hpp"
#include "flowtrack/runtime/arp_board.hpp"
#include "flowtrack/runtime/packet_owner.hpp"

struct rte_mempool;
struct rte_ring;

namespace flowtrack {

class DpdkPortGroup {
 public:
  // Starts every port of `config` for `workers` workers (EAL must be up: io/dpdk_eal.hpp). A stateless
  // function's owner (PacketOwner::spread) becomes "where received" when every worker has an RX queue.
  // Throws std::runtime_error naming the port and the problem (such as a PMD with fewer TX queues than
  // workers: net_af_packet takes qpairs=N).
  DpdkPortGroup(const DataplaneConfig& config, unsigned workers, PacketOwner owner);
  ~DpdkPortGroup();
  DpdkPortGroup(const DpdkPortGroup&) = delete;
  DpdkPortGroup& operator=(const DpdkPortGroup&) = delete;

  const DataplaneConfig& config() const { return config_; }
  unsigned workers() const { return workers_; }
  std::size_t port_count() const { return ports_.size(); }
  std::uint16_t port_id(std::size_t port) const { return ports_[port].id; }
  const std::string& device(std::size_t port) const { return config_.ports[port].device; }
  const MacAddress& mac(std::size_t port) const { return ports_[port].mac; }
  // Every port has this many RX queues (the fewest any port has): workers 0 .. rx_queues()-1 poll one.
  std::uint16_t rx_queues() const { return rx_queues_; }
  const PacketOwner& owner() const { return owner_; }
  rte_mempool* pool() const { return pool_; }
  rte_ring* inbox(unsigned worker) const { return inboxes_[worker]; }  // several workers only
  ArpBoard& arp_board() { return arp_board_; }
  std::size_t mbufs_in_use() const;
  // On worker w's thread, before its DpdkPorts: frees the frames waiting in its RX queues, at most
  // 65536 a port (a run that takes over from another process drops what its ports received before it
  // had the state). Returns how many.
  std::size_t discard_received(unsigned worker);

  // Once every worker's DpdkPorts is closed: frees what waits in the inboxes, stops and closes the
  // ports, frees the pool; returns how many mbufs were missing from the pool (0 unless one leaked).
  // Later calls return the same.
  std::size_t close();

 private:
  struct Port {
    std::uint16_t id;
    MacAddress mac;
  };
  DataplaneConfig config_;
  unsigned workers_;
  PacketOwner owner_;
  std::vector<Port> ports_;
  std::uint16_t rx_queues_ = 0;
  rte_mempool* pool_ = nullptr;
  std::vector<rte_ring*> inboxes_;
  ArpBoard arp_board_;
  bool closed_ = false;
  std::size_t missing_at_close_ = 0;
};

}  // namespace flowtrack
