// The stateful load balancer's configuration (its behaviour is described in stateful_lb.hpp), apart
// from the balancer's template so that configuration readers need not compile it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "flowtrack/conntrack/timeouts.hpp"
#include "flowtrack/nf/backend_pool.hpp"
#include "flowtrack/nf/deployment_key.hpp"
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
  // The key every instance of a deployment shares ([lb] deployment_key, read from its file when the
  // configuration is loaded): the consistent choice's hash is then keyed by it (deployment_key.hpp), and
  // the policy must be maglev, the one choice that instances can make alike without asking each other.
  std::optional<DeploymentKey> deployment_key;
  // First packets a second a worker's tracker takes (new_connection_limiter.hpp); 0: no limit.
  std::uint64_t new_connection_rate = 0;
  std::uint64_t new_connection_burst = 0;  // 0: a tenth of a second's worth (at least 1)
  std::uint64_t burst_or_default() const { return new_connection_burst != 0 ? new_connection_burst : std::max<std::uint64_t>(new_connection_rate / 10, 1); }
};

}  // namespace flowtrack
