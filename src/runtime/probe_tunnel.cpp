#include "flowtrack/runtime/probe_tunnel.hpp"

#include <arpa/inet.h>
#include <net/route.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/packet/bytes.hpp"

namespace flowtrack {
namespace {

// The probes' packets are small (a SYN, an HTTP request): the device's MTU leaves room for the largest
// tunnel's headers within a 1500-byte path, so the kernel never makes a probe's packet too big for it.
constexpr std::uint32_t kDeviceMtu = 1500 - kMaxTunnelOverhead;

std::string address_text(std::uint32_t address) {
  char text[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &address, text, sizeof(text));
  return text;
}

// Routes `vip`/32 into device `device` (SIOCADDRT).
void route_into(std::uint32_t vip, const std::string& device) {
  rtentry route{};
  auto& destination = reinterpret_cast<sockaddr_in&>(route.rt_dst);
  destination.sin_family = AF_INET;
  destination.sin_addr.s_addr = vip;
  auto& mask = reinterpret_cast<sockaddr_in&>(route.rt_genmask);
  mask.sin_family = AF_INET;
  mask.sin_addr.s_addr = 0xffffffffu;
  route.rt_flags = RTF_UP | RTF_HOST;
  std::string name = device;  // rt_dev is not const
  route.rt_dev = name.data();
  const int control = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const int result = control < 0 ? -1 : ioctl(control, SIOCADDRT, &route);
  const int error = errno;
  if (control >= 0) close(control);
  if (result != 0) {
    throw std::runtime_error("the health checks' route to " + address_text(vip) + " into " + device + ": " + std::strerror(error) +
                             (error == EEXIST ? " (this host already routes the VIP)" : ""));
  }
}

}  // namespace

std::span<const std::uint8_t> ProbeRoutes::wrap(std::span<std::uint8_t> buffer, std::size_t headroom) const {
  if (headroom > buffer.size()) return {};
  const std::span<const std::uint8_t> inner = buffer.subspan(headroom);
  if (inner.size() < 20 || (inner[0] >> 4) != 4 || inner[9] != ipproto::kTcp) return {};
  const std::size_t header = std::size_t{inner[0] & 0x0fu} * 4;
  const std::size_t length = load_be16(inner.data() + 2);
  if (header < 20 || length < header + 4 || length > inner.size()) return {};
  FlowKeyV4 key;
  key.src_addr = load_raw<std::uint32_t>(inner.data() + 12);
  key.dst_addr = load_raw<std::uint32_t>(inner.data() + 16);
  key.src_port = load_raw<std::uint16_t>(inner.data() + header);
  key.dst_port = load_raw<std::uint16_t>(inner.data() + header + 2);
  key.protocol = ipproto::kTcp;
  const auto it = routes_.find(key.src_port);
  if (it == routes_.end()) return {};
  const Route& route = it->second;
  const std::size_t overhead = tunnel_overhead(route.tunnel.mode);
  if (overhead > headroom) return {};
  const std::span<std::uint8_t> outer = buffer.subspan(headroom - overhead, overhead + length);
  write_tunnel_headers(outer.data(), route.tunnel, key.src_addr, route.backend, length, inner[1], flow_hash(key));
  return outer;
}

std::uint32_t local_address_towards(std::uint32_t address) {
  const int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return 0;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = address;
  to.sin_port = htons(9);  // a connected UDP socket sends nothing: only the route is looked up
  sockaddr_in local{};
  socklen_t length = sizeof(local);
  const bool found = connect(s, reinterpret_cast<const sockaddr*>(&to), sizeof(to)) == 0 &&
                     getsockname(s, reinterpret_cast<sockaddr*>(&local), &length) == 0;
  close(s);
  return found ? local.sin_addr.s_addr : 0;
}

ProbeTunnel::ProbeTunnel(std::span<const std::uint32_t> vips) : device_("ftprobe%d", kDeviceMtu, true) {
  raw_ = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
  if (raw_ < 0) throw std::runtime_error(std::string("the health checks' raw socket (IPPROTO_RAW): ") + std::strerror(errno));
  try {
    for (const std::uint32_t vip : vips) route_into(vip, device_.name());
  } catch (...) {
    close(raw_);
    throw;
  }
}

ProbeTunnel::~ProbeTunnel() { close(raw_); }

void ProbeTunnel::relay() {
  // Each packet is read after room for the largest tunnel's headers, which go right before it.
  std::array<std::uint8_t, kMaxTunnelOverhead + 2048> buffer;  // the device's MTU fits
  std::uint8_t* const inner = buffer.data() + kMaxTunnelOverhead;
  for (;;) {
    const ssize_t n = read(device_.fd(), inner, buffer.size() - kMaxTunnelOverhead);
    if (n <= 0) return;  // EAGAIN: nothing more waits
    const std::size_t read_into = kMaxTunnelOverhead + static_cast<std::size_t>(n);
    const std::span<const std::uint8_t> outer = routes_.wrap(std::span(buffer).first(read_into), kMaxTunnelOverhead);
    if (outer.empty()) {
      ++dropped_;
      continue;
    }
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = load_raw<std::uint32_t>(outer.data() + 16);
    if (sendto(raw_, outer.data(), outer.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof(to)) ==
        static_cast<ssize_t>(outer.size())) {
      ++relayed_;
    } else {
      ++dropped_;
    }
  }
}

}  // namespace flowtrack
