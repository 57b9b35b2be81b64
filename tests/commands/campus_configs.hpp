// The configurations the command-line tests give the stateful functions for a campus trace: one web
// service on the campus servers' four VIPs (TCP 443 and 80) with two backends, no scheduled change (so a
// connection's backend depends on the policy alone), in NAT mode or in a tunnel, and a NAT whose inside
// network holds every shifted window's clients (10.i.x.y).
#pragma once

#include <cstddef>
#include <fmt/format.h>
#include <string>
#include <string_view>

namespace flowtrack::testing {

// A [[service]] table on the campus servers' four VIPs: `settings` after its name, ports and protocol,
// then its backends' tables.
inline std::string campus_service(std::string_view name, std::string_view ports, std::string_view protocol,
                                  std::string_view settings, std::string_view backends) {
  return fmt::format(R"([[service]]
name = "{}"
vip = ["198.18.0.1", "198.18.0.2", "198.18.0.3", "198.18.0.4"]
port = {}
protocol = "{}"
{}{})",
                     name, ports, protocol, settings, backends);
}

// A [[service.backend]] table: `settings` after its name and address.
inline std::string campus_backend(std::string_view name, std::string_view address, std::string_view settings = "") {
  return fmt::format("  [[service.backend]]\n  name = \"{}\"\n  address = \"{}\"\n{}", name, address, settings);
}

inline std::string campus_lb_config(std::string_view policy, std::size_t max_connections, unsigned second_weight = 1) {
  return fmt::format("[lb]\npolicy = \"{}\"\nmax_connections = {}\n", policy, max_connections) +
         campus_service("web", "[443, 80]", "tcp", "",
                        campus_backend("web-1", "10.200.0.1", "  port = 8080\n") +
                            campus_backend("web-2", "10.200.0.2", fmt::format("  weight = {}\n", second_weight)));
}

// The same web service, and a UDP service on ports 53 and 443 (DNS-like and QUIC-like exchanges of up to
// 1228 bytes), in a tunnel to their backends (forward = "ipip" or "gue"; `mtu` 0: the default).
inline std::string campus_tunnel_lb_config(std::string_view forward, unsigned mtu = 0) {
  const std::string tunnel = fmt::format("forward = \"{}\"\ntunnel_source = \"10.200.255.1\"\n{}", forward,
                                         mtu == 0 ? std::string() : fmt::format("mtu = {}\n", mtu));
  return "[lb]\npolicy = \"least_connections\"\nmax_connections = 2000\n" +
         campus_service("web", "[443, 80]", "tcp", tunnel,
                        campus_backend("web-1", "10.200.0.1") + campus_backend("web-2", "10.200.0.2")) +
         campus_service("udp", "[53, 443]", "udp", tunnel, campus_backend("udp-1", "10.200.1.1"));
}

inline std::string campus_nat_config(std::size_t max_sessions) {
  return fmt::format(R"([nat]
inside = "10.0.0.0/8"
pool = ["203.0.113.1", "203.0.113.2"]
max_sessions = {0}
max_mappings = {0}
)",
                     max_sessions);
}

}  // namespace flowtrack::testing
