#include "direct_returns.hpp"

#include <absl/container/flat_hash_set.h>

#include <algorithm>

namespace flowtrack::cli {

std::uint64_t leave_out_direct_returns(const PacketStore& trace, std::span<const ServiceConfig> services,
                                       PacketPartition& partition) {
  absl::flat_hash_set<std::uint64_t> tunnelled;  // endpoint_key(vip, port, protocol) of the tunnel-mode services
  for (const ServiceConfig& s : services) {
    if (s.tunnel.tunnels()) tunnelled.insert(endpoint_key(s.vip, s.port, s.protocol));
  }
  if (tunnelled.empty()) return 0;
  std::uint64_t left_out = 0;
  for (auto& queue : partition.packets) {
    left_out += std::erase_if(queue, [&](std::uint32_t i) {
      ParsedPacket p;
      return parse_frame(trace[i].bytes, trace.link_type(), p) == ParseStatus::ok && p.ip_version == 4 && p.has_ports &&
             tunnelled.contains(endpoint_key(p.key4.src_addr, p.key4.src_port, p.key4.protocol));
    });
  }
  return left_out;
}

}  // namespace flowtrack::cli
