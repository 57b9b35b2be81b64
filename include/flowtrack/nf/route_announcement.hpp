// Which VIPs an instance of a deployment behind ECMP asks its routing speaker to announce, and the text
// that tells the speaker (runtime/route_announcer.hpp writes it, the speaker's configuration includes it).
//
// A VIP is announced while the instance serves (its workers built and polling, not stopping), is not
// drained as a whole (`ctl drain-instance`), and at least one backend of a service on that VIP can take
// a new connection: in the pool as the control socket's changes left it (not removed, weight above 0,
// not `ctl down`) and, where the service is health-checked, up by its checks. A VIP with no such backend
// is withdrawn even when the service's all_down policy keeps the last backend in the data plane's pool
// (fail_open): the router then sends its clients to an instance that has a healthy backend, if any.
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "flowtrack/nf/backend_pool.hpp"
#include "flowtrack/nf/pool_schedule.hpp"

namespace flowtrack {

// (service name, backend name) of the backends the health checks have down.
using UnhealthyBackends = std::set<std::pair<std::string, std::string>>;

// The VIPs (network order, ascending, each once) to announce while the instance serves and is not
// drained: those of `configured` whose pool, after `applied` (changes that passed check_pool_changes, in
// their order), has a backend that takes new connections and is not in `unhealthy`.
std::vector<std::uint32_t> vips_with_a_healthy_backend(std::span<const ServiceConfig> configured, std::span<const PoolChange> applied,
                                                       const UnhealthyBackends& unhealthy);

// The text of the announcement file for `vips`: a comment line, then one BIRD static route each
// ("route 10.30.9.100/32 blackhole;"), for a `protocol static` block of the speaker's configuration to
// include; the speaker's BGP sends them with itself as the next hop. No VIP: the comment alone.
std::string bird_static_routes(std::span<const std::uint32_t> vips);

}  // namespace flowtrack
