#include "flowtrack/packet/rewrite.hpp"

#include <cstring>
#include <utility>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/checksum.hpp"

namespace flowtrack {
namespace {

using namespace rewrite_detail;

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

namespace rewrite_detail {

void rewrite_ipv4_addr_and_identifier(std::span<std::uint8_t> frame, const ParsedPacket& packet, Endpoint which,
                                      std::uint32_t new_addr, std::uint16_t new_port) {
  rewrite_ipv4_address_and_port(frame, packet, which, new_addr);
  rewrite_icmp_identifier(frame, packet, new_port);
}

}  // namespace rewrite_detail

void rewrite_ipv4_src(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint32_t new_addr) {
  rewrite_ipv4_address_and_port(frame, packet, Endpoint::source, new_addr);
}

void rewrite_ipv4_dst(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint32_t new_addr) {
  rewrite_ipv4_address_and_port(frame, packet, Endpoint::destination, new_addr);
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
