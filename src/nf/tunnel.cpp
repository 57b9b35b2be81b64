#include "flowtrack/nf/tunnel.hpp"

#include <array>
#include <cstring>

#include "flowtrack/nf/icmp_answer.hpp"
#include "flowtrack/packet/bytes.hpp"

namespace flowtrack {

namespace {
constexpr std::size_t kOuterIpHeader = 20;
constexpr std::size_t kOuterUdpHeader = 8;
constexpr std::uint8_t kIpInIp = 4;        // the protocol number of an IPv4 packet inside IPv4
constexpr std::uint16_t kDontFragment = 0x4000;
constexpr std::size_t kEthernetHeader = 14;

// Writes an outer IPv4 header at `ip` (20 bytes, no options) of a packet of `total_length` bytes.
void write_outer_ipv4(std::uint8_t* ip, std::uint8_t tos, std::size_t total_length, std::uint8_t protocol,
                      std::uint32_t source, std::uint32_t destination) {
  constexpr std::uint8_t kTtl = 64;
  const auto length = static_cast<std::uint16_t>(total_length);
  ip[0] = 0x45;
  ip[1] = tos;
  store_be16(ip + 2, length);
  store_be16(ip + 4, 0);  // an atomic datagram (DF, never fragmented) needs no identification (RFC 6864)
  store_be16(ip + 6, kDontFragment);
  ip[8] = kTtl;
  ip[9] = protocol;
  store_raw(ip + 12, source);
  store_raw(ip + 16, destination);
  // The header's checksum from the values just written rather than read back: the one's complement sum
  // of its 16-bit words as this machine loads them (any byte order gives the checksum in that same
  // order, RFC 1071 section 2), stored as it is. The checksum word itself counts as zero.
  const auto word = [](std::uint8_t first, std::uint8_t second) { return load_raw<std::uint16_t>(std::array{first, second}.data()); };
  std::uint32_t sum = word(0x45, tos) + word(static_cast<std::uint8_t>(length >> 8), static_cast<std::uint8_t>(length)) +
                      word(kDontFragment >> 8, 0) + word(kTtl, protocol) + (source & 0xffffu) + (source >> 16) +
                      (destination & 0xffffu) + (destination >> 16);
  sum = (sum & 0xffffu) + (sum >> 16);
  sum = (sum & 0xffffu) + (sum >> 16);
  store_raw(ip + 10, static_cast<std::uint16_t>(~sum));
}

// Moves a frame's link header, its first `l3` bytes, `overhead` bytes down (into its headroom). An
// untagged Ethernet header, nearly every frame's, by a copy of known size, which the compiler inlines
// rather than call memmove: the two places are apart, every tunnel's overhead being at least the
// header's size. Any other length (VLAN tags, another link type) through memmove.
void move_link_header_down(std::uint8_t* frame, std::size_t overhead, std::size_t l3) {
  static_assert(tunnel_overhead(ForwardMode::ipip) >= kEthernetHeader && tunnel_overhead(ForwardMode::gue) >= kEthernetHeader);
  if (l3 == kEthernetHeader) {
    std::memcpy(frame - overhead, frame, kEthernetHeader);
  } else {
    std::memmove(frame - overhead, frame, l3);
  }
}

// Whether `bytes` start with a whole IPv4 packet (version 4, a header of 20 bytes or more, a total
// length that covers the header and lies within `bytes`); its length when it does, else 0.
std::size_t ipv4_packet_length(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < kOuterIpHeader || (bytes[0] >> 4) != 4) return 0;
  const std::size_t header = std::size_t{bytes[0] & 0x0fu} * 4;
  const std::size_t total = load_be16(bytes.data() + 2);
  if (header < kOuterIpHeader || total < header || total > bytes.size()) return 0;
  return total;
}
}  // namespace

std::optional<ForwardMode> forward_mode_from_name(std::string_view name) {
  for (const ForwardMode mode : {ForwardMode::nat, ForwardMode::ipip, ForwardMode::gue}) {
    if (name == forward_mode_name(mode)) return mode;
  }
  return std::nullopt;
}

std::string_view forward_mode_name(ForwardMode mode) {
  switch (mode) {
    case ForwardMode::nat: return "nat";
    case ForwardMode::ipip: return "ipip";
    case ForwardMode::gue: return "gue";
  }
  return "unknown";
}

std::uint16_t gue_source_port(std::uint32_t flow_hash) {
  // The finaliser of MurmurHash3: every input bit reaches every output bit, so that the port does not
  // follow the CRC's linear structure (two client ports a fixed XOR apart would share a folded CRC).
  std::uint32_t h = flow_hash;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return to_network16(static_cast<std::uint16_t>(0x8000u | (h & 0x7fffu)));
}

void write_tunnel_headers(std::uint8_t* out, const TunnelConfig& tunnel, std::uint32_t source, std::uint32_t backend,
                          std::size_t inner_length, std::uint8_t tos, std::uint32_t flow_hash) {
  const std::size_t outer_length = inner_length + tunnel_overhead(tunnel.mode);
  if (tunnel.mode == ForwardMode::gue) {
    write_outer_ipv4(out, tos, outer_length, ipproto::kUdp, source, backend);
    std::uint8_t* const udp = out + kOuterIpHeader;
    store_raw(udp, gue_source_port(flow_hash));
    store_raw(udp + 2, tunnel.gue_port);
    store_be16(udp + 4, static_cast<std::uint16_t>(kOuterUdpHeader + inner_length));
    store_be16(udp + 6, 0);  // no checksum (RFC 768 over IPv4): the inner packet has its own
  } else {
    write_outer_ipv4(out, tos, outer_length, kIpInIp, source, backend);
  }
}

TunnelOutcome encapsulate(NfPacket& packet, const TunnelConfig& tunnel, std::uint32_t backend, std::uint32_t flow_hash) {
  const ParsedPacket& p = packet.parsed;
  const std::size_t overhead = tunnel_overhead(tunnel.mode);
  const std::size_t inner_length = p.ip_total_length;
  if (inner_length + overhead > tunnel.mtu) return TunnelOutcome::too_big;
  if (!has_room_for(packet, overhead)) return TunnelOutcome::no_room;

  const std::size_t l3 = p.l3_offset;
  const std::uint8_t tos = packet.frame[l3 + 1];
  if (overhead <= packet.headroom) {
    // The link header moves down into the headroom; the IP packet stays, the outer headers go between.
    move_link_header_down(packet.frame.data(), overhead, l3);
    packet.grow_front(overhead);
  } else {
    // No headroom: the IP packet moves up (with whatever the capture holds after it), within the room
    // after it (NfPacket's contract), and the outer headers take its place.
    std::uint8_t* const f = packet.frame.data();
    std::memmove(f + l3 + overhead, f + l3, packet.frame.size() - l3);
    packet.frame = {f, packet.frame.size() + overhead};
  }
  write_tunnel_headers(packet.frame.data() + l3, tunnel, tunnel.source, backend, inner_length, tos, flow_hash);
  packet.wire_length += static_cast<std::uint32_t>(overhead);
  return TunnelOutcome::sent;
}

Verdict send_through_tunnel(NfPacket& packet, const TunnelConfig& tunnel, std::uint32_t backend, NfCounters& counters) {
  switch (encapsulate(packet, tunnel, backend, packet.hash)) {
    case TunnelOutcome::sent: return counters.rewrite();
    case TunnelOutcome::no_room: return counters.drop(NfDrop::no_room);
    case TunnelOutcome::too_big: break;
  }
  const Verdict dropped = counters.drop(NfDrop::too_big);
  const ParsedPacket& p = packet.parsed;
  const bool dont_fragment = (load_be16(packet.frame.data() + p.l3_offset + 6) & kDontFragment) != 0;
  if (!dont_fragment) return dropped;
  const auto fits = static_cast<std::uint16_t>(tunnel.mtu - tunnel_overhead(tunnel.mode));
  return answer_with_icmp_error(packet, icmp4::kDestinationUnreachable, icmp4::kFragmentationNeeded, p.key4.dst_addr, fits)
             ? Verdict::reply
             : dropped;
}

std::span<const std::uint8_t> ipip_inner(std::span<const std::uint8_t> outer) {
  const std::size_t outer_length = ipv4_packet_length(outer);
  if (outer_length == 0 || outer[9] != kIpInIp) return {};
  const std::size_t header = std::size_t{outer[0] & 0x0fu} * 4;
  // A fragment of the outer packet holds part of an inner one: never whole.
  if ((load_be16(outer.data() + 6) & 0x3fff) != 0) return {};
  const std::span<const std::uint8_t> rest = outer.subspan(header, outer_length - header);
  return rest.first(ipv4_packet_length(rest));
}

std::span<const std::uint8_t> gue_inner(std::span<const std::uint8_t> payload) {
  return payload.first(ipv4_packet_length(payload));
}

}  // namespace flowtrack
