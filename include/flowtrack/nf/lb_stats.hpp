// The figures an operator reads first of a load balancer (IPVS's `--stats`, Katran's per-VIP and
// per-real counters): per virtual service (VIP, port, protocol) and per backend, the packets and bytes
// through the balancer each way, the connections given since the start and those live now. The rate
// of new connections is the reader's: the difference of two readings over the time between them.
//
// Built from the functions' pools (Backend's counts, backend_pool.hpp): a backend listed by several
// services (one [[service]] with several VIPs or ports is several services) sums their counts, and a
// virtual service's figures are the sums of its backends'.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "flowtrack/nf/backend_pool.hpp"

namespace flowtrack {

struct LbTraffic {
  std::uint64_t packets = 0, bytes = 0;              // to the backends: the clients' packets
  std::uint64_t reply_packets = 0, reply_bytes = 0;  // from the backends, through the balancer
  std::uint64_t connections = 0;       // given to a backend since the start
  std::uint64_t connections_live = 0;  // live now (a function that keeps no connection table: 0)

  LbTraffic& operator+=(const LbTraffic& other);
  friend bool operator==(const LbTraffic&, const LbTraffic&) = default;
};

struct LbStats {
  std::map<std::string, LbTraffic> vips;      // by vip_name()
  std::map<std::string, LbTraffic> backends;  // by backend name

  LbStats& operator+=(const LbStats& other);
  friend bool operator==(const LbStats&, const LbStats&) = default;
};

// "198.18.0.1:443/tcp": how the figures name a virtual service.
std::string vip_name(const ServiceConfig& service);

// The figures of a pool; `connections_of(service, backend)`, when given, counts a backend's connections
// where its Backend entry does not (Concury's control plane).
LbStats lb_stats(std::span<const Service> services);
template <class ConnectionsOf>
LbStats lb_stats(std::span<const Service> services, ConnectionsOf&& connections_of) {
  LbStats stats = lb_stats(services);
  for (std::uint32_t s = 0; s < services.size(); ++s) {
    for (std::uint32_t b = 0; b < services[s].backends().size(); ++b) {
      const std::uint64_t n = connections_of(s, b);
      stats.vips[vip_name(services[s].config())].connections += n;
      stats.backends[services[s].backends()[b].config.name].connections += n;
    }
  }
  return stats;
}

}  // namespace flowtrack
