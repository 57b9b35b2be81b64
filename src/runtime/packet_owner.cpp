#include "flowtrack/runtime/packet_owner.hpp"

#include <algorithm>

#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {
namespace {

// An endpoint (address in network order, port in host order) mixed into 64 bits (a multiplicative
// hash: the high bits are the good ones).
std::uint64_t endpoint_hash(std::uint32_t address, std::uint16_t port) {
  return ((std::uint64_t{address} << 16) ^ port) * 0x9e3779b97f4a7c15ull;
}

unsigned worker_of(std::uint64_t hash, unsigned workers) { return static_cast<unsigned>(((hash >> 32) * workers) >> 32); }

}  // namespace

PacketOwner PacketOwner::spread(unsigned workers) {
  PacketOwner o;
  o.rule_ = workers > 1 ? Rule::spread : Rule::where_received;
  o.workers_ = std::max(workers, 1u);
  return o;
}

PacketOwner PacketOwner::lb_client(unsigned workers, std::vector<std::uint32_t> vips) {
  PacketOwner o;
  o.rule_ = workers > 1 ? Rule::lb_client : Rule::where_received;
  o.workers_ = std::max(workers, 1u);
  o.vips_.insert(vips.begin(), vips.end());
  return o;
}

PacketOwner PacketOwner::nat(unsigned workers, const NatConfig& config) {
  PacketOwner o;
  o.rule_ = workers > 1 ? Rule::nat : Rule::where_received;
  o.workers_ = std::max(workers, 1u);
  o.nat_ = config;
  o.pool_.insert(config.pool.begin(), config.pool.end());
  return o;
}

unsigned PacketOwner::owner(const ParsedPacket& p, unsigned received_by) const {
  if (rule_ == Rule::where_received || p.ip_version != 4) return received_by;
  // The key's ports are zero where the packet has none (a later fragment, a protocol without ports);
  // an ICMP query's identifier stands in both.
  const FlowKeyV4& key = p.key4;
  const std::uint16_t sport = to_host16(key.src_port), dport = to_host16(key.dst_port);
  switch (rule_) {
    case Rule::spread:
      // Symmetric: the two endpoints' hashes are added, so both directions get the same sum.
      return worker_of(endpoint_hash(key.src_addr, sport) + endpoint_hash(key.dst_addr, dport), workers_);
    case Rule::lb_client: {
      const bool request = vips_.contains(key.dst_addr);
      return request ? worker_of(endpoint_hash(key.src_addr, sport), workers_) : worker_of(endpoint_hash(key.dst_addr, dport), workers_);
    }
    case Rule::nat: {
      const bool inbound = pool_.contains(key.dst_addr);
      if (!inbound) return worker_of(endpoint_hash(key.src_addr, 0), workers_);
      if (p.has_ports) return nat_owner_of_port(nat_, workers_, dport);
      // An ICMP error about a packet the NAT sent out: the quoted packet's source port is external.
      if (p.icmp_is_error && p.has_embedded && p.embedded_l4_offset != 0) {
        return nat_owner_of_port(nat_, workers_, to_host16(p.embedded_key4.src_port));
      }
      return received_by;
    }
    case Rule::where_received: break;
  }
  return received_by;
}

}  // namespace flowtrack
