// Connection identifiers: the IPv4 and IPv6 5-tuples that every flow table is keyed by.
//
// Invariants a reader cannot see at once:
//  - Addresses and ports are stored in network byte order, exactly as they appear on the wire, so the
//    parser fills a key with plain copies and Toeplitz/CRC hash the bytes without conversion.
//  - Both key types have a fixed size (16 and 40 bytes) and their padding is always zero, so two keys
//    are equal exactly when their bytes are equal; tables compare them with wide loads (memcmp / SIMD).
//  - For ICMP query messages (echo, timestamp, ...) the identifier stands in for both ports, so that a
//    request and its reply map to one connection, as Linux conntrack does.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

namespace flowtrack {

namespace ipproto {
inline constexpr std::uint8_t kIcmp = 1;
inline constexpr std::uint8_t kTcp = 6;
inline constexpr std::uint8_t kUdp = 17;
inline constexpr std::uint8_t kIcmpV6 = 58;
}  // namespace ipproto

// Host <-> network byte order for the fields of a key.
constexpr std::uint16_t to_network16(std::uint16_t host) {
  return std::endian::native == std::endian::little ? static_cast<std::uint16_t>((host >> 8) | (host << 8)) : host;
}
constexpr std::uint32_t to_network32(std::uint32_t host) {
  if constexpr (std::endian::native == std::endian::little) {
    return ((host & 0xffu) << 24) | ((host & 0xff00u) << 8) | ((host >> 8) & 0xff00u) | (host >> 24);
  }
  return host;
}
constexpr std::uint16_t to_host16(std::uint16_t network) { return to_network16(network); }
constexpr std::uint32_t to_host32(std::uint32_t network) { return to_network32(network); }

// The key of the other direction of a connection: endpoints swapped, protocol kept.
template <class Key>
constexpr Key reversed_endpoints(const Key& key) {
  Key r;
  r.src_addr = key.dst_addr;
  r.dst_addr = key.src_addr;
  r.src_port = key.dst_port;
  r.dst_port = key.src_port;
  r.protocol = key.protocol;
  return r;
}

struct alignas(16) FlowKeyV4 {
  std::uint32_t src_addr = 0;  // network byte order
  std::uint32_t dst_addr = 0;  // network byte order
  std::uint16_t src_port = 0;  // network byte order; ICMP query identifier for ICMP
  std::uint16_t dst_port = 0;  // network byte order; ICMP query identifier for ICMP
  std::uint8_t protocol = 0;
  std::array<std::uint8_t, 3> padding{};  // always zero

  constexpr FlowKeyV4 reversed() const { return reversed_endpoints(*this); }

  friend bool operator==(const FlowKeyV4& a, const FlowKeyV4& b) { return std::memcmp(&a, &b, sizeof(FlowKeyV4)) == 0; }

  // Builds a key from host-order values (convenient in tests and configuration).
  static constexpr FlowKeyV4 from_host(std::uint32_t src, std::uint32_t dst, std::uint16_t sport, std::uint16_t dport,
                                       std::uint8_t proto) {
    FlowKeyV4 k;
    k.src_addr = to_network32(src);
    k.dst_addr = to_network32(dst);
    k.src_port = to_network16(sport);
    k.dst_port = to_network16(dport);
    k.protocol = proto;
    return k;
  }

  std::string to_string() const;  // "10.0.0.1:1234 -> 10.0.0.2:80 tcp"
};
static_assert(sizeof(FlowKeyV4) == 16);

// 8-byte aligned so that it can be copied and compared a word at a time.
struct alignas(8) FlowKeyV6 {
  std::array<std::uint8_t, 16> src_addr{};
  std::array<std::uint8_t, 16> dst_addr{};
  std::uint16_t src_port = 0;  // network byte order; ICMPv6 echo identifier for ICMPv6
  std::uint16_t dst_port = 0;  // network byte order
  std::uint8_t protocol = 0;
  std::array<std::uint8_t, 3> padding{};  // always zero

  constexpr FlowKeyV6 reversed() const { return reversed_endpoints(*this); }

  friend bool operator==(const FlowKeyV6& a, const FlowKeyV6& b) { return std::memcmp(&a, &b, sizeof(FlowKeyV6)) == 0; }

  std::string to_string() const;  // "[2001:db8::1]:1234 -> [2001:db8::2]:80 tcp"
};
static_assert(sizeof(FlowKeyV6) == 40);

std::string ipv4_to_string(std::uint32_t network_order_addr);
std::string ipv6_to_string(const std::array<std::uint8_t, 16>& addr);
std::string protocol_name(std::uint8_t protocol);

// One IPv4 transport endpoint (address and port in network order, protocol) packed into one integer:
// a key for the hash sets and maps that index endpoints (a NAT's mappings, a balancer's services).
constexpr std::uint64_t endpoint_key(std::uint32_t addr, std::uint16_t port, std::uint8_t protocol) {
  return (std::uint64_t{addr} << 32) | (std::uint64_t{port} << 8) | protocol;
}

}  // namespace flowtrack
