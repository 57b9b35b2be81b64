#include "flowtrack/packet/rewrite.hpp"

#include <cstring>
#include <utility>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/checksum.hpp"

namespace flowtrack {
namespace {

// Where the transport checksum lies, or 0 when this packet carries none that the change affects.
std::size_t transport_checksum_offset(const ParsedPacket& packet, bool covers_pseudo_header) {
  if (packet.l4_offset == 0 || !packet.has_ports) return 0;
  const std::uint8_t protocol = packet.protocol();
  std::size_t field = 0;
  if (protocol == ipproto::kTcp) field = 16;
  else if (protocol == ipproto::kUdp) field = 6;
  else if (protocol == ipproto::kIcmpV6 || (protocol == ipproto::kIcmp && !covers_pseudo_header)) field = 2;
  else return 0;
  const std::size_t at = packet.l4_offset + field;
  return at + 2 <= packet.l3_end ? at : 0;
}

// The deltas below take every word and checksum as it lies in the frame (loaded raw, no byte swap):
// ChecksumDelta's arithmetic holds in either byte order.

// Applies the change of the covered words to the checksum at `at`, honouring UDP's "0 means none" (left
// 0) and its "a computed 0 is sent as 0xffff" (both byte-order symmetric).
void apply_to_checksum(std::uint8_t* p, std::size_t at, bool is_udp, const ChecksumDelta& delta) {
  const auto current = load_raw<std::uint16_t>(p + at);
  if (is_udp && current == 0) return;
  std::uint16_t updated = delta.applied_to(current);
  if (is_udp && updated == 0) updated = 0xffff;
  store_raw(p + at, updated);
}

// Writes the 16-bit field at `at` (new_value in network order) and adds its change to `delta`.
void store_word(std::uint8_t* p, std::size_t at, std::uint16_t new_value, ChecksumDelta& delta) {
  delta.change16(load_raw<std::uint16_t>(p + at), new_value);
  store_raw(p + at, new_value);
}

// Where the TCP or UDP checksum of an IPv4 packet lies, or 0 when the packet has none that an address or
// port change must update (another protocol, a non-first fragment, a capture cut before it).
std::size_t tcp_udp_checksum_at(const ParsedPacket& packet) {
  const std::uint8_t protocol = packet.key4.protocol;
  if (packet.ip_version != 4 || !packet.has_ports || (protocol != ipproto::kTcp && protocol != ipproto::kUdp)) return 0;
  const std::size_t at = packet.l4_offset + (protocol == ipproto::kUdp ? 6u : 16u);
  return at + 2 <= packet.l3_end ? at : 0;
}

constexpr std::size_t kNoPort = ~std::size_t{0};

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

// The address alone. ICMPv4's checksum does not cover the addresses; TCP and UDP cover them.
void rewrite_ipv4_addr(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::size_t field,
                       std::uint32_t new_addr) {
  if (packet.ip_version != 4) return;
  rewrite_ipv4_fields(frame.data(), packet, field, new_addr, tcp_udp_checksum_at(packet), kNoPort, 0);
}

void rewrite_port(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::size_t field,
                  std::uint16_t new_port) {
  const std::uint8_t protocol = packet.protocol();
  if (protocol != ipproto::kTcp && protocol != ipproto::kUdp) return;
  const std::size_t l4_sum = transport_checksum_offset(packet, true);
  if (l4_sum == 0) return;
  ChecksumDelta delta;
  store_word(frame.data(), packet.l4_offset + field, new_port, delta);
  apply_to_checksum(frame.data(), l4_sum, protocol == ipproto::kUdp, delta);
}

// An endpoint rewrite without a TCP/UDP checksum to share (ICMP, a non-first fragment, a cut capture):
// the address and the identifier (if any) on their own, out of the common path.
[[gnu::noinline]] void rewrite_ipv4_addr_and_identifier(std::span<std::uint8_t> frame, const ParsedPacket& packet,
                                                        std::size_t addr_field, std::uint32_t new_addr,
                                                        std::uint16_t new_port) {
  rewrite_ipv4_addr(frame, packet, addr_field, new_addr);
  rewrite_icmp_identifier(frame, packet, new_port);
}

}  // namespace

void rewrite_ipv4_src(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint32_t new_addr) {
  rewrite_ipv4_addr(frame, packet, 12, new_addr);
}

void rewrite_ipv4_dst(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint32_t new_addr) {
  rewrite_ipv4_addr(frame, packet, 16, new_addr);
}

void rewrite_src_port(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint16_t new_port) {
  rewrite_port(frame, packet, 0, new_port);
}

void rewrite_dst_port(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint16_t new_port) {
  rewrite_port(frame, packet, 2, new_port);
}

void rewrite_icmp_identifier(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint16_t new_id) {
  if (!packet.icmp_is_query) return;
  const std::size_t l4_sum = transport_checksum_offset(packet, false);
  if (l4_sum == 0) return;
  ChecksumDelta delta;
  store_word(frame.data(), packet.l4_offset + 4, new_id, delta);
  apply_to_checksum(frame.data(), l4_sum, false, delta);
}

void rewrite_ipv4_endpoint(std::span<std::uint8_t> frame, const ParsedPacket& packet, Endpoint which,
                           std::uint32_t new_addr, std::uint16_t new_port) {
  // The source address and port come first in their headers, the destination's right after them.
  const auto destination = static_cast<std::size_t>(which == Endpoint::destination);
  const std::size_t addr_field = 12 + 4 * destination;
  const std::size_t l4_sum = tcp_udp_checksum_at(packet);
  if (l4_sum == 0) [[unlikely]] {
    rewrite_ipv4_addr_and_identifier(frame, packet, addr_field, new_addr, new_port);
    return;
  }
  rewrite_ipv4_fields(frame.data(), packet, addr_field, new_addr, l4_sum, 2 * destination, new_port);
}

void rewrite_quoted_endpoint(std::span<std::uint8_t> frame, const ParsedPacket& packet, QuotedEndpoint which,
                             std::uint32_t new_addr, std::uint16_t new_port) {
  if (packet.ip_version != 4 || !packet.icmp_is_error || !packet.has_embedded) return;
  std::uint8_t* p = frame.data();
  const std::size_t icmp_sum = packet.l4_offset + 2u;
  // Every quoted field sits at an even distance from the ICMP header, so each 16-bit change is a word
  // change of the ICMP checksum's sum as well.
  auto set_word = [&](std::size_t at, std::uint16_t value) {
    const std::uint16_t old = load_be16(p + at);
    store_be16(p + at, value);
    store_be16(p + icmp_sum, checksum_update16(load_be16(p + icmp_sum), old, value));
  };
  const std::size_t ip = packet.embedded_l3_offset;
  const std::size_t l4 = packet.embedded_l4_offset;
  const std::uint8_t protocol = p[ip + 9];
  const bool source = which == QuotedEndpoint::source;

  const std::size_t addr_at = ip + (source ? 12u : 16u);
  const std::uint32_t old_addr = load_be32(p + addr_at);
  std::uint8_t raw[4];
  std::memcpy(raw, &new_addr, 4);
  const std::uint32_t new_addr_host = (std::uint32_t{raw[0]} << 24) | (std::uint32_t{raw[1]} << 16) | (raw[2] << 8) | raw[3];
  set_word(addr_at, static_cast<std::uint16_t>(new_addr_host >> 16));
  set_word(addr_at + 2, static_cast<std::uint16_t>(new_addr_host));
  set_word(ip + 10, checksum_update32(load_be16(p + ip + 10), old_addr, new_addr_host));

  std::uint8_t port_raw[2];
  std::memcpy(port_raw, &new_port, 2);
  const auto new_port_host = static_cast<std::uint16_t>((port_raw[0] << 8) | port_raw[1]);
  if (protocol == ipproto::kTcp || protocol == ipproto::kUdp) {
    const std::size_t port_at = l4 + (source ? 0u : 2u);
    const std::uint16_t old_port = load_be16(p + port_at);
    set_word(port_at, new_port_host);
    const std::size_t sum_at = l4 + (protocol == ipproto::kTcp ? 16u : 6u);
    if (sum_at + 2 > packet.l3_end) return;  // the quote stops before the transport checksum
    const std::uint16_t sum = load_be16(p + sum_at);
    if (protocol == ipproto::kUdp && sum == 0) return;  // no UDP checksum
    std::uint16_t updated = checksum_update16(checksum_update32(sum, old_addr, new_addr_host), old_port, new_port_host);
    if (protocol == ipproto::kUdp && updated == 0) updated = 0xffff;
    set_word(sum_at, updated);
  } else if (protocol == ipproto::kIcmp) {
    // A quoted ICMP query: one identifier for both ends; its checksum does not cover addresses.
    const std::uint16_t old_id = load_be16(p + l4 + 4);
    set_word(l4 + 4, new_port_host);
    set_word(l4 + 2, checksum_update16(load_be16(p + l4 + 2), old_id, new_port_host));
  }
}

}  // namespace flowtrack
