// The services a load balancer offers and the backends behind each, with the policies that pick a
// backend for a new connection.
//
// A service is (VIP, port, protocol); each backend has a name, an address, a port and a weight. A
// backend's index in its service never changes once added (connections remember it), so removing a
// backend only marks it: it takes no new connections, and the connections it has keep going to it
// until they end (the balancer never moves a connection). Draining is weight 0: the same, while the
// backend stays configured. Every change rebuilds the service's Maglev table.
//
// Policies for a new connection (the backend's weight counts in all of them):
//  - round_robin: smooth weighted round robin (each backend's current weight grows by its weight, the
//    largest wins and gives back the total), deterministic, interleaved;
//  - weighted_random: probability weight / total;
//  - maglev: the service's Maglev table at the flow's hash (consistent: the same flow gets the same
//    backend from any balancer whose pool has the same backends taking new connections, by name and
//    weight, in whatever order they were configured or added: maglev.hpp; the stateful LB's hash for
//    it is keyed by the deployment's key when it has one, deployment_key.hpp);
//  - least_connections: fewest live connections per unit of weight (ties: lowest index).
// All addresses and ports are in network byte order, as flow keys hold them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flowtrack/conntrack/tcp_state.hpp"
#include "flowtrack/nf/health_config.hpp"
#include "flowtrack/nf/maglev.hpp"
#include "flowtrack/nf/tunnel.hpp"
#include "flowtrack/packet/flow_key.hpp"
#include "flowtrack/util/random.hpp"

namespace flowtrack {

enum class LbPolicy : std::uint8_t { round_robin, weighted_random, maglev, least_connections };

std::optional<LbPolicy> lb_policy_from_name(std::string_view name);
std::string_view lb_policy_name(LbPolicy policy);

// The largest weight a backend may have (the configuration's and ctl's bound).
inline constexpr std::uint32_t kMaxBackendWeight = 1'000'000;

struct BackendConfig {
  std::string name;
  std::uint32_t address = 0;  // network order
  std::uint16_t port = 0;     // network order; 0 keeps the client's destination port
  std::uint32_t weight = 1;
};

struct ServiceConfig {
  std::string name;
  std::uint32_t vip = 0;    // network order
  std::uint16_t port = 0;   // network order
  std::uint8_t protocol = ipproto::kTcp;
  std::vector<BackendConfig> backends;
  TunnelConfig tunnel;  // how its packets reach the backends: rewritten (nat) or in a tunnel (tunnel.hpp)
  std::optional<HealthCheckConfig> health;  // how its backends are checked (none: they are not)
};

struct Backend {
  BackendConfig config;
  bool removed = false;
  // Out of service (a failed health check, or `ctl down`): no new connection; the stateful LB moves its
  // UDP flows to a live backend, its TCP connections go on. Its weight is kept for when it is up again.
  bool down = false;
  std::uint64_t connections = 0;        // live
  std::uint64_t total_connections = 0;  // ever assigned
  // The live ones by phase (opening, established, closing: tcp_state.hpp); they add up to `connections`.
  std::array<std::uint64_t, kConnectionPhaseCount> by_phase{};
  std::int64_t smooth_weight = 0;       // round robin's running weight
  // Its traffic through the balancer, in wire bytes: the clients' packets to it, and its answers back
  // (none from a tunnel-mode service's backends, which answer the clients directly).
  std::uint64_t packets = 0, bytes = 0, reply_packets = 0, reply_bytes = 0;
  bool takes_new() const { return !removed && !down && config.weight > 0; }

  // One packet of its traffic, in direction `d` (original: to the backend).
  void count(Direction d, std::uint32_t wire_length) {
    if (d == Direction::original) {
      ++packets;
      bytes += wire_length;
    } else {
      ++reply_packets;
      reply_bytes += wire_length;
    }
  }

  // A new connection, in `phase`; a live one that ends in `phase`; one that moves between phases.
  void join(ConnectionPhase phase) {
    ++connections;
    ++total_connections;
    ++by_phase[static_cast<std::size_t>(phase)];
  }
  // A live connection carried over from a saved state: already among total_connections.
  void carry_over(ConnectionPhase phase) {
    ++connections;
    ++by_phase[static_cast<std::size_t>(phase)];
  }
  void leave(ConnectionPhase phase) {
    --connections;
    --by_phase[static_cast<std::size_t>(phase)];
  }
  void move(ConnectionPhase from, ConnectionPhase to) {
    --by_phase[static_cast<std::size_t>(from)];
    ++by_phase[static_cast<std::size_t>(to)];
  }
  std::uint64_t in_phase(ConnectionPhase phase) const { return by_phase[static_cast<std::size_t>(phase)]; }
};

class Service {
 public:
  static constexpr std::uint32_t kNoBackend = MaglevTable::kNoBackend;

  // `same_pool`: a service of the same pool, whose Maglev table this one takes instead of building its
  // own when their backends are the same (names, weights, removals, in order) — services of one name
  // (one [[service]] on several VIPs or ports) are, and a 16M-entry table is then built once, not once
  // per VIP and port. Otherwise, or without it, the table is built.
  Service(ServiceConfig config, std::uint32_t maglev_size = MaglevTable::kDefaultSize, const Service* same_pool = nullptr);

  // A backend for a new connection whose flow hash is `hash`, or kNoBackend.
  std::uint32_t choose(LbPolicy policy, std::uint32_t hash, Random& rng);
  // The Maglev choice for a flow hash: an index into backends(), or kNoBackend.
  std::uint32_t consistent_choice(std::uint32_t hash) const {
    const std::uint32_t m = maglev_.lookup(hash);
    return m == MaglevTable::kNoBackend ? kNoBackend : maglev_index_[m];
  }

  // Control plane. Names are unique within a service; false when the name is unknown (or, for add,
  // already present and not removed). A backend added where it was removed from (its name, address and
  // port) takes its entry back: its index, and its counts of connections. `same_pool` as for the
  // constructor: a service that has just taken the same change.
  bool add_backend(const BackendConfig& backend, const Service* same_pool = nullptr);
  bool set_weight(const std::string& name, std::uint32_t weight, const Service* same_pool = nullptr);
  bool set_down(const std::string& name, bool down, const Service* same_pool = nullptr);
  bool remove_backend(const std::string& name, const Service* same_pool = nullptr);
  // The pool as a saved state had it (nf/lb_snapshot.hpp): these backends in these places, their live
  // counts zero (the connections restored count themselves). The reason when it cannot be this
  // service's (a name twice among the backends taking part, a weight above 1000000, more backends
  // taking new connections than the Maglev table's size allows), with nothing changed.
  std::optional<std::string> restore_backends(std::vector<Backend> backends, const Service* same_pool = nullptr);

  const ServiceConfig& config() const { return config_; }
  std::vector<Backend>& backends() { return backends_; }
  const std::vector<Backend>& backends() const { return backends_; }

 private:
  void rebuild(const Service* same_pool);
  bool has_pool_of(const Service& other) const;
  Backend* find(const std::string& name);

  ServiceConfig config_;  // as configured at start (backends_ is the live list)
  std::vector<Backend> backends_;
  MaglevTable maglev_;
  std::vector<std::uint32_t> maglev_index_;  // Maglev's backend i -> index in backends_
};

// Appends a service built from `config`, taking the Maglev table of the one before it when their pools
// are the same (Service's same_pool): the services of one [[service]] are listed one after another.
void append_service(std::vector<Service>& services, const ServiceConfig& config, std::uint32_t maglev_size);

}  // namespace flowtrack
