// The packet parser: from a raw captured frame to the connection key and the header offsets that the
// network functions rewrite in place.
//
// Guarantees:
//  - It never reads outside `frame`; every length field is checked against the bytes actually present.
//  - Every malformed case has its own ParseStatus, so drops can be counted by reason.
//  - A capture shorter than the IP total length (snaplen) still parses: the headers are checked against
//    the captured bytes, and `captured_truncated` says the payload is cut. A frame longer than the IP
//    total length (Ethernet padding) is fine: `l3_end` marks where the IP packet really ends.
//  - Hot path: no allocation, no exceptions; the key is filled with plain copies in network byte order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/flow_key.hpp"
#include "flowtrack/packet/link_type.hpp"
#include "flowtrack/packet/mac_address.hpp"

namespace flowtrack {

enum class ParseStatus : std::uint8_t {
  ok,
  truncated_link,          // shorter than the link-layer header
  truncated_vlan,          // a VLAN tag is cut
  too_many_vlan_tags,      // more than two stacked tags
  unsupported_ethertype,   // not IPv4/IPv6 (ARP, LLDP, ...)
  unsupported_link_protocol,  // Linux cooked capture carrying something other than IP
  truncated_ipv4,          // fewer than 20 bytes, or fewer than the IHL says
  bad_ipv4_version,        // version nibble is not 4 where IPv4 was announced
  bad_ipv4_header_length,  // IHL < 5
  bad_ipv4_total_length,   // total length smaller than the header
  truncated_ipv6,          // fewer than 40 bytes
  bad_ipv6_version,        // version nibble is not 6 where IPv6 was announced
  truncated_ipv6_extension,   // an extension header is cut
  too_many_ipv6_extensions,   // the chain is longer than we are willing to walk
  bad_ip_version,          // raw IP capture whose first nibble is neither 4 nor 6
  truncated_tcp,           // fewer than 20 bytes or fewer than the data offset says
  bad_tcp_data_offset,     // data offset < 5
  truncated_udp,
  truncated_icmp,
  count_,
};

std::string_view parse_status_name(ParseStatus status);

inline constexpr std::size_t kParseStatusCount = static_cast<std::size_t>(ParseStatus::count_);

// Which fields mean something: every field up to `has_embedded` always (zero when the packet has none
// of it: no transport header, not a fragment, not ICMP); key6 only when ip_version == 6; vlan_ids[i]
// only for i < vlan_count; the embedded_* fields only when has_embedded. Fields outside that rule keep
// whatever an earlier packet left (the common case's parse writes only the fields that always mean
// something), so nothing may read them.
struct ParsedPacket {
  FlowKeyV4 key4;               // valid when ip_version == 4
  std::uint8_t ip_version = 0;  // 4 or 6 once the IP header parsed
  std::uint16_t l3_offset = 0;       // first byte of the IP header
  std::uint16_t l4_offset = 0;       // first byte of the transport header (0 when there is none)
  std::uint16_t payload_offset = 0;  // first byte after the transport header (0 when there is none)
  std::uint16_t l3_end = 0;          // one past the last byte of the IP packet, clamped to the capture
  std::uint16_t ip_total_length = 0; // as the header says (IPv6: 40 + payload length)
  bool captured_truncated = false;   // the capture holds fewer bytes than the IP packet
  std::uint8_t vlan_count = 0;

  // Fragments: a non-first fragment has no transport header; its key has zero ports.
  bool is_fragment = false;
  bool has_ports = false;         // transport ports (or ICMP identifier) are in the key
  std::uint32_t ip_id = 0;        // IPv4 identification or IPv6 fragment identification
  std::uint16_t fragment_offset = 0;  // in bytes
  bool more_fragments = false;

  std::uint8_t tcp_flags = 0;  // valid for TCP

  // ICMP / ICMPv6.
  std::uint8_t icmp_type = 0;
  std::uint8_t icmp_code = 0;
  bool icmp_is_query = false;  // echo and friends: the identifier is in both key ports
  bool icmp_is_error = false;  // destination unreachable, time exceeded, ...
  bool has_embedded = false;   // an ICMP error whose embedded packet parsed far enough for a key

  // The fields below mean something only as the rule above says.
  std::uint16_t vlan_ids[2] = {0, 0};  // outer first
  FlowKeyV6 key6;                      // valid when ip_version == 6
  std::uint16_t embedded_l3_offset = 0;
  std::uint16_t embedded_l4_offset = 0;  // 0 when the embedded transport header is not present
  FlowKeyV4 embedded_key4;     // the original packet's key, as that packet had it (its direction)
  FlowKeyV6 embedded_key6;

  std::uint8_t protocol() const { return ip_version == 4 ? key4.protocol : key6.protocol; }
};

namespace tcpflag {
inline constexpr std::uint8_t kFin = 0x01;
inline constexpr std::uint8_t kSyn = 0x02;
inline constexpr std::uint8_t kRst = 0x04;
inline constexpr std::uint8_t kPsh = 0x08;
inline constexpr std::uint8_t kAck = 0x10;
}  // namespace tcpflag

// parse_frame without the shortcut: every frame through the general walk, which parse_frame falls back
// on. Its answer is parse_frame's (the parser's tests and fuzz target compare the two), so apart from
// parse_frame only they call it.
ParseStatus parse_frame_general(std::span<const std::uint8_t> frame, LinkType link, ParsedPacket& out);

// The common case of parse_frame, inline so that a packet costs no call on it; the rest is in parser.cpp.
namespace parser_detail {

// Offsets are 16-bit: a frame is considered up to its first 64 KiB (the largest IP packet), and
// `captured_truncated` reports anything the cut removes.
inline constexpr std::size_t kMaxFrameBytes = 0xffff;

// The shortcut of parse_frame: an untagged Ethernet frame, IPv4 without options (version and IHL byte
// 0x45), neither flag nor offset of fragmentation set (DF may be), a TCP header whose data offset fits
// or a whole UDP header, all within the captured bytes and the IP total length. Writes every field that
// always means something (ParsedPacket's rule) and returns true; false, with `out` untouched, for anything
// else, which the general walk then parses (with its own answer for every malformed case).
inline bool parse_plain_ipv4(const std::uint8_t* p, std::size_t len, ParsedPacket& out) {
  constexpr std::size_t l3 = 14, l4 = l3 + 20;
  if (len < l4 + 8 || load_raw<std::uint16_t>(p + 12) != to_network16(kEtherTypeIpv4) || p[l3] != 0x45) return false;
  if ((load_be16(p + l3 + 6) & 0x3fff) != 0) return false;
  const std::uint16_t total_length = load_be16(p + l3 + 2);
  const std::size_t l3_end = std::min(l3 + total_length, len);
  const std::uint8_t protocol = p[l3 + 9];
  std::size_t payload = 0;
  std::uint8_t tcp_flags = 0;
  if (protocol == ipproto::kTcp) {
    if (l3_end < l4 + 20) return false;  // l3_end <= len: the fixed header is readable from here on
    payload = l4 + static_cast<std::size_t>(p[l4 + 12] >> 4) * 4;
    if (payload < l4 + 20 || payload > l3_end) return false;
    tcp_flags = p[l4 + 13];
  } else if (protocol == ipproto::kUdp) {
    payload = l4 + 8;
    if (payload > l3_end) return false;
  } else {
    return false;
  }
  out.key4.src_addr = load_raw<std::uint32_t>(p + l3 + 12);
  out.key4.dst_addr = load_raw<std::uint32_t>(p + l3 + 16);
  out.key4.src_port = load_raw<std::uint16_t>(p + l4);
  out.key4.dst_port = load_raw<std::uint16_t>(p + l4 + 2);
  out.key4.protocol = protocol;
  out.key4.padding = {};
  out.ip_version = 4;
  out.l3_offset = l3;
  out.l4_offset = l4;
  out.payload_offset = static_cast<std::uint16_t>(payload);
  out.l3_end = static_cast<std::uint16_t>(l3_end);
  out.ip_total_length = total_length;
  out.captured_truncated = l3 + total_length > len;
  out.vlan_count = 0;
  out.is_fragment = false;
  out.has_ports = true;
  out.ip_id = load_be16(p + l3 + 4);
  out.fragment_offset = 0;
  out.more_fragments = false;
  out.tcp_flags = tcp_flags;
  out.icmp_type = 0;
  out.icmp_code = 0;
  out.icmp_is_query = false;
  out.icmp_is_error = false;
  out.has_embedded = false;
  return true;
}

}  // namespace parser_detail

// Parses one frame. On any status other than ok, `out` holds what was parsed before the failure.
// An untagged Ethernet frame of an IPv4 packet without options or fragmentation carrying a whole TCP or
// UDP header (nearly every packet) takes a shortcut that checks and writes only what such a packet has.
inline ParseStatus parse_frame(std::span<const std::uint8_t> frame, LinkType link, ParsedPacket& out) {
  if (link == LinkType::ethernet &&
      parser_detail::parse_plain_ipv4(frame.data(), std::min(frame.size(), parser_detail::kMaxFrameBytes), out)) {
    return ParseStatus::ok;
  }
  return parse_frame_general(frame, link, out);
}

// Whether two parses agree on every field that means something (ParsedPacket's rule).
bool same_meaning(const ParsedPacket& a, const ParsedPacket& b);

}  // namespace flowtrack
