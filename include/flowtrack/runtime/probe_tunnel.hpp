// The health checks' way into a tunnel-mode service (health_probe.hpp). A backend of a service in IPIP
// or GUE serves the VIP, which it holds itself, from the packets it takes out of the tunnel: a probe of
// its own address proves only that it runs, not that it answers the clients. So its probe goes where
// the clients' packets go: to the VIP, inside the service's tunnel to the backend (as Katran encapsulates
// its health checks, for the same reason).
//
// The probe stays an ordinary kernel TCP connection, to VIP:port, from the address this host reaches the
// backend from (the management interface's, local_address_towards()). The kernel routes each checked VIP
// (a /32 route each, which go with the device) into a TUN device of flowtrack's, "ftprobe<N>"; the health
// checks' thread reads the connection's packets there and, by the connection's local port, puts each in
// its backend's tunnel (ProbeRoutes: IPIP or GUE as the service's data, outer source the probe's own
// address) and sends it to the backend through the kernel (a raw socket). The backend takes it out of
// the tunnel as it does a client's packet and answers from the VIP straight to the probe's address, as it
// answers a client. That answer comes in by the management interface from the VIP, whose route is the
// TUN device's: the interface's reverse-path filter must be loose (rp_filter 2) or off, not strict.
// While the checks run, this host's own connections to those VIPs go into the device and are dropped.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "flowtrack/nf/tunnel.hpp"
#include "flowtrack/runtime/tun_device.hpp"

namespace flowtrack {

// Which backend's tunnel each probe connection's packets take, by the connection's local port.
class ProbeRoutes {
 public:
  // The connection from local port `port` (network order) goes to `backend` (network order) in
  // `tunnel`. A port keeps its route until another probe takes it: a connection's last packets (its
  // FIN, an ACK) still reach the backend after the probe has closed it.
  void set(std::uint16_t port, std::uint32_t backend, const TunnelConfig& tunnel) { routes_[port] = {backend, tunnel}; }

  // The packet to send for the IPv4 packet the kernel routed into the device, which `buffer` holds after
  // `headroom` free bytes: its tunnel's headers, from the inner packet's source, written in the headroom
  // right before it, and the packet unchanged. Returns that outer packet (a part of `buffer`), or nothing
  // when the inner one is no probe's (not a whole IPv4 TCP packet, or from a port without a route) or
  // the headroom is too small for its tunnel's headers.
  std::span<const std::uint8_t> wrap(std::span<std::uint8_t> buffer, std::size_t headroom) const;

 private:
  struct Route {
    std::uint32_t backend;
    TunnelConfig tunnel;
  };
  absl::flat_hash_map<std::uint16_t, Route> routes_;  // at most one a port
};

// The local address the kernel sends from to reach `address` (network order both): the probe's source
// for a backend. 0 when no route leads there.
std::uint32_t local_address_towards(std::uint32_t address);

class ProbeTunnel {
 public:
  // Creates the TUN device and the raw socket and routes each of `vips` (network order) into the device.
  // Throws std::runtime_error naming what failed (it needs CAP_NET_ADMIN and CAP_NET_RAW).
  explicit ProbeTunnel(std::span<const std::uint32_t> vips);
  ProbeTunnel(const ProbeTunnel&) = delete;
  ProbeTunnel& operator=(const ProbeTunnel&) = delete;
  ~ProbeTunnel();

  int fd() const { return device_.fd(); }  // readable when the kernel has routed packets into the device
  const std::string& device() const { return device_.name(); }
  ProbeRoutes& routes() { return routes_; }

  // Sends every packet waiting in the device in its probe's tunnel; drops the others (counted).
  void relay();
  std::uint64_t relayed() const { return relayed_; }
  std::uint64_t dropped() const { return dropped_; }

 private:
  TunDevice device_;
  int raw_ = -1;  // IPPROTO_RAW: the outer packets as written, routed by their destination
  ProbeRoutes routes_;
  std::uint64_t relayed_ = 0, dropped_ = 0;
};

}  // namespace flowtrack
