#include "flowtrack/nf/lb_stats.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

namespace flowtrack {

LbTraffic& LbTraffic::operator+=(const LbTraffic& other) {
  packets += other.packets;
  bytes += other.bytes;
  reply_packets += other.reply_packets;
  reply_bytes += other.reply_bytes;
  connections += other.connections;
  connections_live += other.connections_live;
  return *this;
}

LbStats& LbStats::operator+=(const LbStats& other) {
  for (const auto& [name, traffic] : other.vips) vips[name] += traffic;
  for (const auto& [name, traffic] : other.backends) backends[name] += traffic;
  return *this;
}

std::string vip_name(const ServiceConfig& service) {
  char address[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &service.vip, address, sizeof(address));
  const std::string_view protocol = service.protocol == ipproto::kTcp ? "tcp" : service.protocol == ipproto::kUdp ? "udp" : "ip";
  return fmt::format("{}:{}/{}", address, to_host16(service.port), protocol);
}

LbStats lb_stats(std::span<const Service> services) {
  LbStats stats;
  for (const Service& s : services) {
    LbTraffic& vip = stats.vips[vip_name(s.config())];
    for (const Backend& b : s.backends()) {
      const LbTraffic traffic{b.packets, b.bytes, b.reply_packets, b.reply_bytes, b.total_connections, b.connections};
      vip += traffic;
      stats.backends[b.config.name] += traffic;
    }
  }
  return stats;
}

}  // namespace flowtrack
