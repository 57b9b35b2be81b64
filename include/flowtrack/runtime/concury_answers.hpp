// How a client-side capture's answers reached the Concury load balancer (replay_rehearsal.hpp): an
// answer from a VIP came from the backend its connection's client packets were last sent to, read from
// their destination as Concury rewrote it (so that an answer after a rewrite of the arrays comes from the
// backend that has the connection, as it would, and Concury's repairs are rehearsed); for a connection
// whose client has sent nothing through Concury yet, from the backend the arrays give its client now
// (the control plane's, when it knows it).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <optional>
#include <utility>

#include "flowtrack/nf/concury_lb.hpp"
#include "flowtrack/runtime/replay_rehearsal.hpp"

namespace flowtrack {

class ConcuryAnswers {
 public:
  explicit ConcuryAnswers(LinkType link) : link_(link) {}

  Presented operator()(NfPacket& packet, const ConcuryLb& nf);
  // A client packet's backend, from the destination Concury gave it (none when it was dropped).
  void processed(const NfPacket& packet, const ConcuryLb& nf);

 private:
  struct Connection {
    std::uint32_t service, client_addr;
    std::uint16_t client_port;
    friend bool operator==(const Connection&, const Connection&) = default;
    template <class H>
    friend H AbslHashValue(H h, const Connection& c) {
      return H::combine(std::move(h), c.service, c.client_addr, c.client_port);
    }
  };
  LinkType link_;
  std::optional<Connection> client_packet_;  // the packet being presented, when a client's
  absl::flat_hash_map<Connection, std::uint16_t> sent_to_;
};

}  // namespace flowtrack
