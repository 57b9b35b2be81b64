// In-place header rewrites for NAT and load balancing that keep every checksum right incrementally
// (RFC 1624), so a rewrite costs a few instructions instead of a pass over the payload.
//
// All take the frame and the ParsedPacket that parse_frame produced for it, and new values in network
// byte order (as keys hold them). Checksums that are absent stay absent: an IPv4 UDP checksum of 0
// means "none" and is left 0; a recomputed UDP checksum of 0 is written as 0xffff. A non-first fragment
// has no transport header, so only the IP header is touched.
#pragma once

#include <cstdint>
#include <span>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/checksum.hpp"
#include "flowtrack/packet/parser.hpp"

namespace flowtrack {

// Which end of a packet a rewrite changes.
enum class Endpoint : std::uint8_t { source, destination };

// The common case of every IPv4 address and endpoint rewrite, inline so that it costs no call and a
// caller's known field folds away; the rest is in rewrite.cpp.
namespace rewrite_detail {

// The deltas below take every word and checksum as it lies in the frame (loaded raw, no byte swap):
// ChecksumDelta's arithmetic holds in either byte order.

// Applies the change of the covered words to the checksum at `at`, honouring UDP's "0 means none" (left
// 0) and its "a computed 0 is sent as 0xffff" (both byte-order symmetric).
inline void apply_to_checksum(std::uint8_t* p, std::size_t at, bool is_udp, const ChecksumDelta& delta) {
  const auto current = load_raw<std::uint16_t>(p + at);
  if (is_udp && current == 0) return;
  std::uint16_t updated = delta.applied_to(current);
  if (is_udp && updated == 0) updated = 0xffff;
  store_raw(p + at, updated);
}

// Writes the 16-bit field at `at` (new_value in network order) and adds its change to `delta`.
inline void store_word(std::uint8_t* p, std::size_t at, std::uint16_t new_value, ChecksumDelta& delta) {
  delta.change16(load_raw<std::uint16_t>(p + at), new_value);
  store_raw(p + at, new_value);
}

// Where the TCP or UDP checksum of an IPv4 packet lies, or 0 when the packet has none that an address or
// port change must update (another protocol, a non-first fragment, a capture cut before it).
inline std::size_t tcp_udp_checksum_at(const ParsedPacket& packet) {
  const std::uint8_t protocol = packet.key4.protocol;
  if (packet.ip_version != 4 || !packet.has_ports || (protocol != ipproto::kTcp && protocol != ipproto::kUdp)) return 0;
  const std::size_t at = packet.l4_offset + (protocol == ipproto::kUdp ? 6u : 16u);
  return at + 2 <= packet.l3_end ? at : 0;
}

inline constexpr std::size_t kNoPort = ~std::size_t{0};

// An IPv4 packet's address at `addr_field` of its IP header, and its TCP/UDP port at `port_field` of the
// transport header unless that is kNoPort, take new values (network order). The IP header checksum
// covers the address; the transport checksum at `l4_sum` (0: none, and then no port is written either),
// both, the address through its pseudo header: one delta serves the two. Inlined into each rewrite so
// that a known field folds away; what it needs of `packet` is read before the first store into the
// frame, which the compiler must otherwise assume may have changed it.
[[gnu::always_inline]] inline void rewrite_ipv4_fields(std::uint8_t* p, const ParsedPacket& packet, std::size_t addr_field,
                                                       std::uint32_t new_addr, std::size_t l4_sum, std::size_t port_field,
                                                       std::uint16_t new_port) {
  const std::size_t l3 = packet.l3_offset, l4 = packet.l4_offset;
  const bool udp = packet.key4.protocol == ipproto::kUdp;
  std::uint8_t* const addr = p + l3 + addr_field;
  ChecksumDelta delta;
  delta.change32(load_raw<std::uint32_t>(addr), new_addr);
  store_raw(addr, new_addr);
  apply_to_checksum(p, l3 + 10, false, delta);
  if (l4_sum == 0) return;
  if (port_field != kNoPort) store_word(p, l4 + port_field, new_port, delta);
  apply_to_checksum(p, l4_sum, udp, delta);
}

// An endpoint rewrite without a TCP/UDP checksum to share (ICMP, a non-first fragment, a cut capture):
// the address and the identifier (if any) on their own, out of the common path.
void rewrite_ipv4_addr_and_identifier(std::span<std::uint8_t> frame, const ParsedPacket& packet, Endpoint which,
                                      std::uint32_t new_addr, std::uint16_t new_port);

}  // namespace rewrite_detail

// An IPv4 packet's source or destination address and, unless new_port is 0, its TCP/UDP port (an ICMP
// identifier stays): a load balancer's rewrite, each checksum updated once for both. ICMPv4's checksum
// does not cover the addresses; TCP's and UDP's cover them. Packets other than IPv4 are left alone.
inline void rewrite_ipv4_address_and_port(std::span<std::uint8_t> frame, const ParsedPacket& packet, Endpoint which,
                                          std::uint32_t new_addr, std::uint16_t new_port = 0) {
  if (packet.ip_version != 4) return;
  // The source address and port come first in their headers, the destination's right after them.
  const auto destination = static_cast<std::size_t>(which == Endpoint::destination);
  rewrite_detail::rewrite_ipv4_fields(frame.data(), packet, 12 + 4 * destination, new_addr,
                                      rewrite_detail::tcp_udp_checksum_at(packet),
                                      new_port != 0 ? 2 * destination : rewrite_detail::kNoPort, new_port);
}

// The address alone (rewrite_ipv4_address_and_port without a port), out of line.
void rewrite_ipv4_src(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint32_t new_addr);
void rewrite_ipv4_dst(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint32_t new_addr);

// TCP/UDP ports. Does nothing for packets without a transport header.
void rewrite_src_port(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint16_t new_port);
void rewrite_dst_port(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint16_t new_port);

// The identifier of an ICMP/ICMPv6 query (echo request/reply and friends).
void rewrite_icmp_identifier(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint16_t new_id);

// A whole IPv4 endpoint, as a NAT translates it: the address and the port (TCP, UDP) or the query's
// identifier (ICMP), with each checksum updated once for both. The same bytes as the address rewrite
// followed by the port or identifier rewrite.
inline void rewrite_ipv4_endpoint(std::span<std::uint8_t> frame, const ParsedPacket& packet, Endpoint which,
                                  std::uint32_t new_addr, std::uint16_t new_port) {
  // The source address and port come first in their headers, the destination's right after them.
  const auto destination = static_cast<std::size_t>(which == Endpoint::destination);
  const std::size_t addr_field = 12 + 4 * destination;
  const std::size_t l4_sum = rewrite_detail::tcp_udp_checksum_at(packet);
  if (l4_sum == 0) [[unlikely]] {
    rewrite_detail::rewrite_ipv4_addr_and_identifier(frame, packet, which, new_addr, new_port);
    return;
  }
  rewrite_detail::rewrite_ipv4_fields(frame.data(), packet, addr_field, new_addr, l4_sum, 2 * destination, new_port);
}

// An ICMPv4 error quotes the packet that caused it. A NAT translating the error must translate the
// quoted packet too (RFC 5508 section 4.1): these rewrite its source or destination endpoint, the
// address and the port (or, for a quoted ICMP query, the identifier), and keep right the quoted IP
// header checksum, the quoted transport checksum when it was quoted (as the checksum of the whole
// original packet), and the outer ICMP checksum, which covers all of them. Nothing happens unless the
// packet is an ICMPv4 error whose quoted packet parsed (packet.has_embedded).
enum class QuotedEndpoint : std::uint8_t { source, destination };
void rewrite_quoted_endpoint(std::span<std::uint8_t> frame, const ParsedPacket& packet, QuotedEndpoint which,
                             std::uint32_t new_addr, std::uint16_t new_port);

}  // namespace flowtrack
