// Which worker owns a packet in a live data plane with several workers (runtime/dpdk_ports.hpp): the
// one whose function instance holds the packet's connection, decided from fields that both directions
// of a connection carry after the function's rewrites, so that a reply reaches the worker that created
// the state even when the NIC (or the kernel's fanout) hands it to another queue.
//  - stateless functions (fwd, slb) hold no state: a packet stays where it was received, or, when some
//    workers have no RX queue of their own (a PMD with fewer queues than workers: software dispatch),
//    goes by its symmetric 5-tuple hash;
//  - the stateful LB: by the client's endpoint, the source of a request (to a VIP), the destination of
//    a backend's answer;
//  - the NAT: an inbound packet (to a pool address) by the external port it is addressed to (or the
//    ICMP echo identifier, or the port inside an ICMP error's embedded packet), through
//    nat_owner_of_port, since each worker allocates from its own slice; an outbound one by its inside
//    address, so that a subscriber's quota and paired address live on one worker.
// A packet whose owner cannot be read (a non-first fragment: no ports; a truncated header) stays where
// it was received: the function there counts what it cannot serve (a held fragment that never meets its
// first one times out, counted).
// No DPDK here: the ports parse each frame once (packet/parser.hpp) and ask owner() of what they read,
// which the function then gets as it is. Whether a packet goes to a VIP or a pool address is one hash
// lookup, whatever the number of services or pool addresses.
#pragma once

#include <absl/container/flat_hash_set.h>

#include <cstdint>
#include <vector>

#include "flowtrack/nf/nat44_config.hpp"
#include "flowtrack/packet/parser.hpp"

namespace flowtrack {

class PacketOwner {
 public:
  enum class Rule : std::uint8_t { where_received, spread, lb_client, nat };

  // Every packet stays with the worker that received it (one worker, or a stateless function on a
  // port that gives every worker a queue).
  PacketOwner() = default;
  static PacketOwner spread(unsigned workers);
  static PacketOwner lb_client(unsigned workers, std::vector<std::uint32_t> vips);  // network order
  static PacketOwner nat(unsigned workers, const NatConfig& config);

  Rule rule() const { return rule_; }
  // The owner of a packet (what parse_frame read of its frame) that worker `received_by` took in.
  unsigned owner(const ParsedPacket& packet, unsigned received_by) const;

 private:
  Rule rule_ = Rule::where_received;
  unsigned workers_ = 1;
  absl::flat_hash_set<std::uint32_t> vips_;  // lb_client; network order
  NatConfig nat_;                            // nat: the port range
  absl::flat_hash_set<std::uint32_t> pool_;  // nat: the pool's addresses, network order
};

}  // namespace flowtrack
