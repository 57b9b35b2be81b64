#include "flowtrack/runtime/packet_owner.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {
namespace {

constexpr std::size_t kIpv4MinHeader = 20;
constexpr std::uint8_t kIcmpEchoReply = 0, kIcmpUnreachable = 3, kIcmpEchoRequest = 8, kIcmpTimeExceeded = 11,
                       kIcmpParameterProblem = 12;

std::uint32_t address_at(const std::uint8_t* p) {
  std::uint32_t a;
  std::memcpy(&a, p, sizeof a);
  return a;
}

// An IPv4 header's fields that owners read; nullopt when the header is cut short.
struct Ipv4View {
  std::uint8_t protocol;
  std::uint32_t source, destination;  // network order
  std::span<const std::uint8_t> l4;   // empty for a fragment other than the first
};

std::optional<Ipv4View> view(std::span<const std::uint8_t> ip) {
  if (ip.size() < kIpv4MinHeader || ip[0] >> 4 != 4) return std::nullopt;
  const std::size_t header = std::size_t{ip[0] & 0x0fu} * 4;
  if (header < kIpv4MinHeader || header > ip.size()) return std::nullopt;
  const bool later_fragment = (load_be16(ip.data() + 6) & 0x1fff) != 0;
  return Ipv4View{ip[9], address_at(ip.data() + 12), address_at(ip.data() + 16),
                  later_fragment ? std::span<const std::uint8_t>{} : ip.subspan(header)};
}

// An endpoint (address, port) mixed into 64 bits (a multiplicative hash: the high bits are the good ones).
std::uint64_t endpoint_hash(std::uint32_t address, std::uint16_t port) {
  return ((std::uint64_t{address} << 16) ^ port) * 0x9e3779b97f4a7c15ull;
}

unsigned worker_of(std::uint64_t hash, unsigned workers) { return static_cast<unsigned>(((hash >> 32) * workers) >> 32); }

// The source and destination ports of TCP and UDP, the identifier of an ICMP echo (both slots).
std::optional<std::pair<std::uint16_t, std::uint16_t>> ports_of(std::uint8_t protocol, std::span<const std::uint8_t> l4) {
  if ((protocol == ipproto::kTcp || protocol == ipproto::kUdp) && l4.size() >= 4) return std::pair{load_be16(l4.data()), load_be16(l4.data() + 2)};
  if (protocol == ipproto::kIcmp && l4.size() >= 8 && (l4[0] == kIcmpEchoRequest || l4[0] == kIcmpEchoReply)) {
    const std::uint16_t id = load_be16(l4.data() + 4);
    return std::pair{id, id};
  }
  return std::nullopt;
}

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
  o.vips_ = std::move(vips);
  return o;
}

PacketOwner PacketOwner::nat(unsigned workers, const NatConfig& config) {
  PacketOwner o;
  o.rule_ = workers > 1 ? Rule::nat : Rule::where_received;
  o.workers_ = std::max(workers, 1u);
  o.nat_ = config;
  return o;
}

unsigned PacketOwner::owner(std::span<const std::uint8_t> ipv4, unsigned received_by) const {
  if (rule_ == Rule::where_received) return received_by;
  const auto ip = view(ipv4);
  if (!ip) return received_by;
  const auto ports = ports_of(ip->protocol, ip->l4);
  switch (rule_) {
    case Rule::spread: {
      // Symmetric: the two endpoints' hashes are added, so both directions get the same sum.
      const std::uint16_t sport = ports ? ports->first : 0, dport = ports ? ports->second : 0;
      return worker_of(endpoint_hash(ip->source, sport) + endpoint_hash(ip->destination, dport), workers_);
    }
    case Rule::lb_client: {
      const bool request = std::find(vips_.begin(), vips_.end(), ip->destination) != vips_.end();
      if (request) return worker_of(endpoint_hash(ip->source, ports ? ports->first : 0), workers_);
      return worker_of(endpoint_hash(ip->destination, ports ? ports->second : 0), workers_);
    }
    case Rule::nat: {
      const bool inbound = std::find(nat_.pool.begin(), nat_.pool.end(), ip->destination) != nat_.pool.end();
      if (!inbound) return worker_of(endpoint_hash(ip->source, 0), workers_);
      if (ports) return nat_owner_of_port(nat_, workers_, ports->second);
      // An ICMP error about a packet the NAT sent out: the embedded packet's source port is external.
      const bool error = ip->protocol == ipproto::kIcmp && ip->l4.size() >= 8 &&
                         (ip->l4[0] == kIcmpUnreachable || ip->l4[0] == kIcmpTimeExceeded || ip->l4[0] == kIcmpParameterProblem);
      if (!error) return received_by;
      const auto inner = view(ip->l4.subspan(8));
      const auto inner_ports = inner ? ports_of(inner->protocol, inner->l4) : std::nullopt;
      return inner_ports ? nat_owner_of_port(nat_, workers_, inner_ports->first) : received_by;
    }
    case Rule::where_received: break;
  }
  return received_by;
}

}  // namespace flowtrack
