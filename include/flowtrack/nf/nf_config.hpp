// Network-function configuration files (TOML), as `flowtrack run --config FILE` reads them. The format,
// key by key, is docs/guide/configuration.md; examples/ has a file per function.
//
//   [lb]                     stateful LB options (policy, max_connections, stateless_when_full,
//                            non_syn_first = "consistent" | "policy" | "drop", maglev_size, seed,
//                            new_connection_rate, new_connection_burst, deployment_key: a key file's
//                            path, read as the configuration loads, with policy "maglev" only)
//   [slb]                    stateless LB options (selection = "maglev" | "modulo")
//   [nat]                    inside = "10.0.0.0/16", pool = ["203.0.113.1", ...], ports = [1024, 65535],
//                            filtering = "endpoint_independent" | "address_dependent",
//                            quarantine (seconds), max_sessions, max_mappings (per worker),
//                            port_quota (per inside address and protocol, 0: none), icmp_on_exhaustion,
//                            fragment_datagrams, fragments_held, fragment_timeout (seconds);
//                            its timeouts default to the RFC minimums (nat_timeouts()), and [timeouts]
//                            below them are refused unless below_rfc_minimums = true (tests, labs)
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
// key would otherwise be silently ignored), and so is a configuration that contradicts itself: two
// services of one name, or on one VIP, port and protocol; an address where a host is meant (a VIP,
// a backend, a pool address, a port's address, a gateway, a neighbour) that no host can have (0.0.0.0/8,
// loopback, multicast, 255.255.255.255); a pool address inside the NAT's inside network; two ports
// on one address or on overlapping networks; a gateway on no port's network.
//
// The text is bounded (size, nesting) before it is parsed (config_text.hpp). Each loader takes the
// text, or a path that it reads first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "flowtrack/nf/config_text.hpp"
#include "flowtrack/nf/nat44_config.hpp"
#include "flowtrack/nf/stateful_lb_config.hpp"
#include "flowtrack/nf/stateless_lb.hpp"

namespace flowtrack {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a configuration may ask for beyond each key's own range: services, counted after their
// repetition by VIPs and ports (each takes a Maglev table in every instance), and [[change]] tables,
// each of which refills its service's Maglev table when it comes due (its other services of the
// same pool copy it): at most kMaxScheduleEntries entries refilled by the whole schedule (seconds of
// work here, per instance; `run` rehearses a trace once more, so twice that).
inline constexpr std::size_t kMaxServices = 65536;
inline constexpr std::size_t kMaxPoolChanges = 10000;
inline constexpr std::uint64_t kMaxScheduleEntries = std::uint64_t{1} << 30;

// Both read the services; each reads its own section and ignores the other's.
StatelessLbConfig load_stateless_lb_config(const ConfigText& text);
StatefulLbConfig load_stateful_lb_config(const ConfigText& text);
NatConfig load_nat_config(const ConfigText& text);
StatelessLbConfig load_stateless_lb_config(const std::string& path);
StatefulLbConfig load_stateful_lb_config(const std::string& path);
NatConfig load_nat_config(const std::string& path);
// The forwarder has no section of its own; its configuration must still be one (TOML, known sections).
void check_forwarder_config(const ConfigText& text);

}  // namespace flowtrack
