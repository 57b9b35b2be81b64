// The stateful load balancer's configuration (its behaviour is described in stateful_lb.hpp), apart
// from the balancer's template so that configuration readers need not compile it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "flowtrack/conntrack/timeouts.hpp"
#include "flowtrack/nf/backend_pool.hpp"
#include "flowtrack/nf/pool_schedule.hpp"

namespace flowtrack {

// What a TCP first packet without SYN gets (stateful_lb.hpp).
enum class NonSynFirst : std::uint8_t { consistent, policy, drop };

struct StatefulLbConfig {
  std::vector<ServiceConfig> services;
  LbPolicy policy = LbPolicy::maglev;
  std::size_t max_connections = 1 << 20;
  bool stateless_when_full = false;
  NonSynFirst non_syn_first = NonSynFirst::consistent;
  std::vector<PoolChange> changes;  // any order; the balancer sorts them by time
  ConntrackTimeouts timeouts;
  std::uint32_t maglev_size = MaglevTable::kDefaultSize;
  std::uint64_t seed = 1;  // weighted_random's generator
};

}  // namespace flowtrack
