// The configurations the command-line tests give the stateful functions for a campus trace: one web
// service on the campus servers' four VIPs (TCP 443 and 80) with two backends, no scheduled change (so a
// connection's backend depends on the policy alone), in NAT mode or in a tunnel, and a NAT whose inside network holds every shifted
// window's clients (10.i.x.y).
#pragma once

#include <cstddef>
#include <fmt/format.h>
#include <string>
#include <string_view>

namespace flowtrack::testing {

inline std::string campus_lb_config(std::string_view policy, std::size_t max_connections, unsigned second_weight = 1) {
  return fmt::format(R"([lb]
policy = "{}"
max_connections = {}
[[service]]
name = "web"
vip = ["198.18.0.1", "198.18.0.2", "198.18.0.3", "198.18.0.4"]
port = [443, 80]
protocol = "tcp"
  [[service.backend]]
  name = "web-1"
  address = "10.200.0.1"
  port = 8080
  [[service.backend]]
  name = "web-2"
  address = "10.200.0.2"
  weight = {}
)",
                     policy, max_connections, second_weight);
}

// The same web service, and a UDP service on ports 53 and 443 (DNS-like and QUIC-like exchanges of up to
// 1228 bytes), in a tunnel to their backends (forward = "ipip" or "gue"; `mtu` 0: the default).
inline std::string campus_tunnel_lb_config(std::string_view forward, unsigned mtu = 0) {
  const std::string tunnel = fmt::format("forward = \"{}\"\ntunnel_source = \"10.200.255.1\"\n{}", forward,
                                         mtu == 0 ? std::string() : fmt::format("mtu = {}\n", mtu));
  return fmt::format(R"([lb]
policy = "least_connections"
max_connections = 2000
[[service]]
name = "web"
vip = ["198.18.0.1", "198.18.0.2", "198.18.0.3", "198.18.0.4"]
port = [443, 80]
protocol = "tcp"
{0}
  [[service.backend]]
  name = "web-1"
  address = "10.200.0.1"
  [[service.backend]]
  name = "web-2"
  address = "10.200.0.2"
[[service]]
name = "udp"
vip = ["198.18.0.1", "198.18.0.2", "198.18.0.3", "198.18.0.4"]
port = [53, 443]
protocol = "udp"
{0}
  [[service.backend]]
  name = "udp-1"
  address = "10.200.1.1"
)",
                     tunnel);
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
