// A TUN device (Linux's /dev/net/tun, IFF_TUN without the packet information header): what is written
// to it the kernel receives as IP packets arriving on the device, and what the kernel routes into it is
// read from it. It lives as long as this object (not persistent), and its routes go with it.
//
// The health checks' probe tunnel (probe_tunnel.hpp) reads from one; flowtrack-decap, a backend's end
// of the load balancers' tunnels, writes the clients' packets into one. Creating it needs CAP_NET_ADMIN.
#pragma once

#include <cstdint>
#include <string>

namespace flowtrack {

class TunDevice {
 public:
  // Creates (or attaches to) device `name`, which may hold a "%d" for the kernel to number it, sets its
  // MTU when `mtu` is not 0, and brings it up. Reads do not block when `nonblocking`. Throws
  // std::runtime_error naming the step that failed and why.
  explicit TunDevice(const std::string& name, std::uint32_t mtu = 0, bool nonblocking = false);
  TunDevice(const TunDevice&) = delete;
  TunDevice& operator=(const TunDevice&) = delete;
  ~TunDevice();

  int fd() const { return fd_; }
  const std::string& name() const { return name_; }  // as the kernel named it

 private:
  int fd_ = -1;
  std::string name_;
};

}  // namespace flowtrack
