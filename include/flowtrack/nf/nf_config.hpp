// Network-function configuration files (TOML), as `flowtrack run --config FILE` reads them. The format,
// key by key, is docs/guide/configuration.md; examples/ has a file per function.
//
//   [lb]                     stateful LB options (policy, max_connections, stateless_when_full,
//                            non_syn_first = "consistent" | "policy" | "drop", maglev_size, seed,
//                            new_connection_rate, new_connection_burst)
//   [slb]                    stateless LB options (selection = "maglev" | "modulo")
//   [nat]                    inside = "10.0.0.0/16", pool = ["203.0.113.1", ...], ports = [1024, 65535],
//                            filtering = "endpoint_independent" | "address_dependent",
//                            quarantine (seconds), max_sessions, max_mappings (per worker),
//                            port_quota (per inside address and protocol, 0: none), icmp_on_exhaustion,
//                            fragment_datagrams, fragments_held, fragment_timeout (seconds);
//                            its timeouts default to the RFC minimums (nat_timeouts())
//   [timeouts]               connection timeouts in seconds (tcp_<state>, udp_unreplied, udp_replied,
//                            icmp, other); Linux conntrack's by default
//   [[service]]              name, vip, port, protocol ("tcp" | "udp"); vip and port may be arrays,
//                            which repeat the service for every (vip, port) pair; forward = "nat" |
//                            "ipip" | "gue", and for a tunnel tunnel_source, mtu, gue_port (nf/tunnel.hpp)
//   [[service.backend]]      name, address, port (0 or absent: the service's port), weight (1)
//                            (at most maglev_size / 100 backends per service)
//   [[change]]               the LB's pool changes (pool_schedule.hpp): at (seconds after the first
//                            packet), service, backend, action = "add" | "remove" | "drain" | "weight",
//                            weight (for add and weight), address and port (for add)
//
// Every problem is reported as one ConfigError whose message names the file, the line and the key:
// "lb.toml:7: service.port: expected an integer in 0..65535". Unknown keys are errors (a misspelt
// key would otherwise be silently ignored).
#pragma once

#include <stdexcept>
#include <string>

#include "flowtrack/nf/nat44_config.hpp"
#include "flowtrack/nf/stateful_lb_config.hpp"
#include "flowtrack/nf/stateless_lb.hpp"

namespace flowtrack {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Both read the services; each reads its own section and ignores the other's.
StatelessLbConfig load_stateless_lb_config(const std::string& path);
StatefulLbConfig load_stateful_lb_config(const std::string& path);
NatConfig load_nat_config(const std::string& path);

}  // namespace flowtrack
