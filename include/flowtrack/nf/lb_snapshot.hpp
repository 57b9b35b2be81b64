// A stateful load balancer's state as plain data (StatefulLb::snapshot, StatefulLb::restore): what a
// state file holds across a restart (state_file.hpp). The pool as it is then (backends added,
// drained, reweighted, marked down or removed since the start, in their places: a connection names its backend by
// its index) and every connection with its backend. Addresses and ports in network order; times are
// what is left from the moment of the snapshot.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flowtrack/conntrack/saved_connection.hpp"
#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {

struct LbSnapshot {
  struct Backend {
    std::string name;
    std::uint32_t address = 0;
    std::uint16_t port = 0;
    std::uint32_t weight = 0;
    bool removed = false;
    std::uint64_t total_connections = 0;  // ever assigned (the live ones are the connections naming it)
    std::int64_t smooth_weight = 0;       // round robin's running weight
    bool down = false;                    // out of service (a failed health check, `ctl down`)
    bool operator==(const Backend&) const = default;
  };
  struct Service {
    std::string name;  // a service is known by its name, VIP, port and protocol
    std::uint32_t vip = 0;
    std::uint16_t port = 0;
    std::uint8_t protocol = 0;
    std::vector<Backend> backends;
    bool operator==(const Service&) const = default;
  };
  struct Connection {
    SavedConnection<FlowKeyV4> connection;
    std::uint32_t service = 0, backend = 0;  // indexes into services and its backends
    bool operator==(const Connection&) const = default;
  };

  std::vector<Service> services;
  std::vector<Connection> connections;

  bool operator==(const LbSnapshot&) const = default;
};

}  // namespace flowtrack
