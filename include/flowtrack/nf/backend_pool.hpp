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
//    backend from any balancer with the same configuration);
//  - least_connections: fewest live connections per unit of weight (ties: lowest index).
// All addresses and ports are in network byte order, as flow keys hold them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flowtrack/io/random.hpp"
#include "flowtrack/nf/maglev.hpp"
#include "flowtrack/packet/flow_key.hpp"

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
};

struct Backend {
  BackendConfig config;
  bool removed = false;
  std::uint64_t connections = 0;        // live
  std::uint64_t total_connections = 0;  // ever assigned
  std::int64_t smooth_weight = 0;       // round robin's running weight
  bool takes_new() const { return !removed && config.weight > 0; }
};

class Service {
 public:
  static constexpr std::uint32_t kNoBackend = MaglevTable::kNoBackend;

  Service(ServiceConfig config, std::uint32_t maglev_size = MaglevTable::kDefaultSize);

  // A backend for a new connection whose flow hash is `hash`, or kNoBackend.
  std::uint32_t choose(LbPolicy policy, std::uint32_t hash, Random& rng);
  // The Maglev choice for a flow hash: an index into backends(), or kNoBackend.
  std::uint32_t consistent_choice(std::uint32_t hash) const {
    const std::uint32_t m = maglev_.lookup(hash);
    return m == MaglevTable::kNoBackend ? kNoBackend : maglev_index_[m];
  }

  // Control plane. Names are unique within a service; false when the name is unknown (or, for add,
  // already present and not removed). A backend added where it was removed from (its name, address and
  // port) takes its entry back: its index, and its counts of connections.
  bool add_backend(const BackendConfig& backend);
  bool set_weight(const std::string& name, std::uint32_t weight);
  bool remove_backend(const std::string& name);
  // The pool as a saved state had it (nf/lb_snapshot.hpp): these backends in these places, their live
  // counts zero (the connections restored count themselves). The reason when it cannot be this
  // service's (a name twice among the backends taking part, a weight above 1000000, more backends
  // taking new connections than the Maglev table's size allows), with nothing changed.
  std::optional<std::string> restore_backends(std::vector<Backend> backends);

  const ServiceConfig& config() const { return config_; }
  std::vector<Backend>& backends() { return backends_; }
  const std::vector<Backend>& backends() const { return backends_; }

 private:
  void rebuild();
  Backend* find(const std::string& name);

  ServiceConfig config_;  // as configured at start (backends_ is the live list)
  std::vector<Backend> backends_;
  MaglevTable maglev_;
  std::vector<std::uint32_t> maglev_index_;  // Maglev's backend i -> index in backends_
};

}  // namespace flowtrack
