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

// Writes an IPv4 address (network order) at `field` of the IP header and updates the header checksum;
// returns the change, for the transport checksum that covers the address too.
ChecksumDelta store_ipv4_addr(std::uint8_t* p, const ParsedPacket& packet, std::size_t field, std::uint32_t new_addr) {
  const std::size_t at = packet.l3_offset + field;
  ChecksumDelta delta;
  delta.change32(load_raw<std::uint32_t>(p + at), new_addr);
  store_raw(p + at, new_addr);
  apply_to_checksum(p, packet.l3_offset + 10, false, delta);
  return delta;
}

void rewrite_ipv4_addr(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::size_t field,
                       std::uint32_t new_addr) {
  if (packet.ip_version != 4) return;
  std::uint8_t* p = frame.data();
  const ChecksumDelta delta = store_ipv4_addr(p, packet, field, new_addr);
  // ICMPv4's checksum does not cover the addresses; TCP and UDP cover them through the pseudo header.
  if (const std::size_t l4_sum = transport_checksum_offset(packet, true); l4_sum != 0 &&
                                                                          packet.protocol() != ipproto::kIcmp) {
    apply_to_checksum(p, l4_sum, packet.protocol() == ipproto::kUdp, delta);
  }
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
  const bool source = which == Endpoint::source;
  const std::uint8_t protocol = packet.key4.protocol;
  const bool udp = protocol == ipproto::kUdp;
  // Where the transport checksum lies for TCP (16) and UDP (6); checked against the packet's end below.
  const std::size_t l4_sum = packet.l4_offset + (udp ? 6u : 16u);
  if (packet.ip_version != 4 || !packet.has_ports || !(udp || protocol == ipproto::kTcp) || l4_sum + 2 > packet.l3_end) {
    // No transport checksum to share: the address and the identifier (if any) on their own.
    rewrite_ipv4_addr(frame, packet, source ? 12 : 16, new_addr);
    rewrite_icmp_identifier(frame, packet, new_port);
    return;
  }
  std::uint8_t* const p = frame.data();
  std::uint8_t* const addr = p + packet.l3_offset + (source ? 12u : 16u);
  std::uint8_t* const ip_sum = p + packet.l3_offset + 10u;
  std::uint8_t* const port = p + packet.l4_offset + (source ? 0u : 2u);
  std::uint8_t* const transport_sum = p + l4_sum;
  ChecksumDelta delta;
  delta.change32(load_raw<std::uint32_t>(addr), new_addr);
  store_raw(addr, new_addr);
  store_raw(ip_sum, delta.applied_to(load_raw<std::uint16_t>(ip_sum)));  // the IP header covers the address
  delta.change16(load_raw<std::uint16_t>(port), new_port);
  store_raw(port, new_port);
  // The transport checksum covers both (the address through its pseudo header). UDP: 0 is "none".
  const auto current = load_raw<std::uint16_t>(transport_sum);
  if (udp && current == 0) return;
  const std::uint16_t updated = delta.applied_to(current);
  store_raw(transport_sum, udp && updated == 0 ? std::uint16_t{0xffff} : updated);
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
