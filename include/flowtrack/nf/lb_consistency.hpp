// What a load balancer promises about its connections, checked from its packets alone (a test oracle,
// outside every balancer): every packet seen as it came in (its parse, which a function leaves as it was)
// and as it left (its frame, rewritten):
//  - violations: a packet of a connection sent to another backend than the connection's first packet;
//  - false_hits: a packet sent to a backend that is not in the service's pool, or a connection's first
//    packet sent to one that takes no new connections (drained, removed).
// A connection is a client endpoint's packets to a service from a first one on; a TCP SYN begins the
// next one, unless it is a retransmission (its connection was opened by a SYN that no answer has followed
// yet, less than the handshake timeout ago: RFC 9293, 3.8.1 and 3.10.7.4). An answer is a packet that
// leaves with a service's VIP as its source. A balancer that keeps a SYN on the tuple of a connection it
// still tracks as established on that connection's backend (as the stateful LB does) shows such a SYN
// as a false hit once that backend no longer takes new connections.
//
// The pool is read from the balancer (`services`, which must outlive the ledger): a backend's index
// never changes, a removed backend is kept, marked. It costs a hash-map update per packet: the runtime
// runs it as an output that wraps another (runtime/consistency_check.hpp), only when asked.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/nf/backend_pool.hpp"
#include "flowtrack/packet/parser.hpp"

namespace flowtrack {

struct ConsistencyCounts {
  std::uint64_t violations = 0;
  std::uint64_t false_hits = 0;
};

// The part that does not depend on the wrapped output.
class ConsistencyLedger {
 public:
  ConsistencyLedger(const std::vector<Service>& services, LinkType link, Nanos handshake_timeout);

  // A packet the function forwarded: `in` as it came, `out` its frame as it leaves.
  void forwarded(const ParsedPacket& in, std::span<const std::uint8_t> out, Nanos now);
  const ConsistencyCounts& counts() const { return counts_; }

 private:
  struct Connection {
    std::uint32_t backend;
    Nanos syn_at;
    bool unanswered_syn;
  };
  static constexpr std::uint32_t kNoService = ~std::uint32_t{0};
  std::uint32_t service_at(std::uint32_t address, std::uint16_t port, std::uint8_t protocol) const;
  // The index in `service`'s pool of the backend at (address, port), or the pool's size.
  std::uint32_t backend_at(std::uint32_t service, std::uint32_t address, std::uint16_t port) const;
  static std::uint64_t connection_key(std::uint32_t service, std::uint32_t address, std::uint16_t port) {
    return std::uint64_t{service} << 48 ^ std::uint64_t{address} << 16 ^ port;
  }

  const std::vector<Service>& services_;
  LinkType link_;
  Nanos handshake_timeout_;
  absl::flat_hash_map<std::uint64_t, std::uint32_t> service_index_;  // endpoint_key(vip, port, protocol)
  absl::flat_hash_map<std::uint64_t, Connection> connections_;
  ConsistencyCounts counts_;
};

}  // namespace flowtrack
