// "slb": the stateless L4 load balancer ([lb-flowtables]'s IPLoadBalancer): every packet to a service is sent
// to the backend its flow hash selects, with no per-connection state, and packets from a backend are
// given back the service's address (the reverse element) by a static map from backend to service.
//
// Selection is Maglev (default: consistent, so a backend change moves only the flows that must move)
// or hash modulo the number of backends taking new flows ([lb-flowtables]'s choice: any change moves almost
// every flow). Without state, a pool change moves flows mid-connection: that is what the stateful LB
// (stateful_lb.hpp) exists to prevent, and the tests show it. A service in tunnel mode (tunnel.hpp) gets
// its packets to the backend in IPIP or GUE, and its backends answer the clients directly.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <span>
#include <vector>

#include "flowtrack/nf/backend_pool.hpp"
#include "flowtrack/nf/pool_schedule.hpp"
#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/nf/service_index.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

enum class StatelessSelection : std::uint8_t { maglev, modulo };

struct StatelessLbConfig {
  std::vector<ServiceConfig> services;
  StatelessSelection selection = StatelessSelection::maglev;
  std::uint32_t maglev_size = MaglevTable::kDefaultSize;
};

class StatelessLb {
 public:
  explicit StatelessLb(const StatelessLbConfig& config);

  // One stage: per packet, the service (a hash lookup), the backend, the rewrite.
  template <BurstOutput Out>
  void process_burst(std::span<NfPacket> burst, Out& out) {
    for (NfPacket& packet : burst) out.verdict(packet, balance(packet));
    out.stage_done(NfStage::rewrite);
  }
  std::size_t expire(Nanos, std::size_t = kDefaultExpireBudget) { return 0; }

  // A pool change that has passed check_pool_changes against the changes applied before it
  // (TakesPoolChanges): new flows see it at once (the function keeps no state of the old ones).
  void apply(const PoolChange& change);
  const std::vector<Service>& services() const { return services_; }
  const NfCounters& counters() const { return counters_; }

 private:
  Verdict balance(NfPacket& packet);
  std::uint32_t select(Service& service, std::uint32_t hash) const;
  void index_backends();

  StatelessSelection selection_;
  std::vector<Service> services_;
  ServiceIndex service_of_vip_;
  // endpoint_key(backend, port, proto) -> (service, backend index)
  absl::flat_hash_map<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>> service_of_backend_;
  NfCounters counters_;
};

}  // namespace flowtrack
