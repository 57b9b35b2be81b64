// What a saved state's meaning depends on, as one number in the state file's header (state_file.hpp):
// a state saved under a configuration with another hash is refused, since its records would not mean
// the same (a port of another worker's slice, a session of an address no longer in the pool, a
// connection to a service that is gone). The first 8 bytes of the SHA-256 of a canonical text of:
//   nat: the inside network, the pool, the port range, the block size, the filtering, the table sizes
//        and the worker count (each worker owns a slice of the ports);
//   lb:  each service's name, VIP, port, protocol and whether it tunnels, the Maglev table's size,
//        the table's size and the worker count. Not the backends: the saved pool, with every change
//        made through `ctl` since the start, replaces the configured one.
// Timeouts, quotas and the like are not in it: they apply to what comes next, not to what is saved.
#pragma once

#include <cstdint>

#include "flowtrack/nf/nat44_config.hpp"
#include "flowtrack/nf/stateful_lb_config.hpp"

namespace flowtrack {

std::uint64_t nat_state_hash(const NatConfig& config, unsigned workers);
std::uint64_t lb_state_hash(const StatefulLbConfig& config, unsigned workers);

}  // namespace flowtrack
