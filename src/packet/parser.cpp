#include "flowtrack/packet/parser.hpp"

#include <algorithm>
#include <array>
#include <tuple>

#include "flowtrack/packet/bytes.hpp"
#include "flowtrack/packet/mac_address.hpp"

namespace flowtrack {
namespace {

constexpr std::uint16_t kEtherTypeIpv6 = 0x86dd;
constexpr std::uint16_t kEtherTypeVlan = 0x8100;
constexpr std::uint16_t kEtherTypeQinQ = 0x88a8;
constexpr std::uint16_t kEtherTypeQinQLegacy = 0x9100;
constexpr std::size_t kMaxVlanTags = 2;
constexpr std::size_t kMaxIpv6Extensions = 8;

bool is_icmpv4_query(std::uint8_t type) {
  switch (type) {
    case 0: case 8:    // echo reply, echo request
    case 13: case 14:  // timestamp
    case 15: case 16:  // information
    case 17: case 18:  // address mask
      return true;
    default:
      return false;
  }
}

bool is_icmpv4_error(std::uint8_t type) {
  return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
}

bool is_icmpv6_query(std::uint8_t type) { return type == 128 || type == 129; }
bool is_icmpv6_error(std::uint8_t type) { return type >= 1 && type <= 4; }

// The network-layer facts both the outer and an ICMP-embedded header yield.
struct IpHeader {
  std::uint8_t version = 0;
  std::uint8_t protocol = 0;   // the transport protocol after any extension headers
  std::size_t header_end = 0;  // first byte after the IP header (and IPv6 extensions)
  std::uint16_t total_length = 0;
  bool is_fragment = false;
  bool non_first_fragment = false;
  bool more_fragments = false;
  std::uint16_t fragment_offset = 0;
  std::uint32_t id = 0;
};

// Parses an IPv4 header at `off`, checking it against `end` (one past the last readable byte). Inlined:
// on the per-packet path of every IPv4 packet (a call cost about a third of its instructions).
[[gnu::always_inline]] inline ParseStatus parse_ipv4_header(const std::uint8_t* p, std::size_t off, std::size_t end, IpHeader& ip, FlowKeyV4& key) {
  if (end - off < 20) return ParseStatus::truncated_ipv4;
  const std::uint8_t version_ihl = p[off];
  if ((version_ihl >> 4) != 4) return ParseStatus::bad_ipv4_version;
  const std::size_t ihl = std::size_t{version_ihl & 0x0fu} * 4;
  if (ihl < 20) return ParseStatus::bad_ipv4_header_length;
  if (end - off < ihl) return ParseStatus::truncated_ipv4;

  ip.version = 4;
  ip.total_length = load_be16(p + off + 2);
  ip.id = load_be16(p + off + 4);
  const std::uint16_t fragment_field = load_be16(p + off + 6);
  ip.more_fragments = (fragment_field & 0x2000) != 0;
  ip.fragment_offset = static_cast<std::uint16_t>((fragment_field & 0x1fff) * 8);
  ip.is_fragment = ip.more_fragments || ip.fragment_offset != 0;
  ip.non_first_fragment = ip.fragment_offset != 0;
  ip.protocol = p[off + 9];
  ip.header_end = off + ihl;

  key.src_addr = load_raw<std::uint32_t>(p + off + 12);
  key.dst_addr = load_raw<std::uint32_t>(p + off + 16);
  key.protocol = ip.protocol;
  return ParseStatus::ok;
}

// Parses an IPv6 header and walks its extension-header chain up to the transport header.
ParseStatus parse_ipv6_header(const std::uint8_t* p, std::size_t off, std::size_t end, IpHeader& ip, FlowKeyV6& key) {
  if (end - off < 40) return ParseStatus::truncated_ipv6;
  if ((p[off] >> 4) != 6) return ParseStatus::bad_ipv6_version;
  ip.version = 6;
  ip.total_length = static_cast<std::uint16_t>(std::min<std::size_t>(40 + load_be16(p + off + 4), 0xffff));
  std::memcpy(key.src_addr.data(), p + off + 8, 16);
  std::memcpy(key.dst_addr.data(), p + off + 24, 16);

  std::uint8_t next = p[off + 6];
  std::size_t cur = off + 40;
  for (std::size_t walked = 0;; ++walked) {
    const bool extension = next == 0 || next == 43 || next == 44 || next == 60 || next == 51;
    if (!extension) break;
    if (walked == kMaxIpv6Extensions) return ParseStatus::too_many_ipv6_extensions;
    if (end - cur < 8) return ParseStatus::truncated_ipv6_extension;
    std::size_t length;
    if (next == 44) {
      const std::uint16_t offset_field = load_be16(p + cur + 2);
      ip.fragment_offset = offset_field & 0xfff8;
      ip.more_fragments = (offset_field & 1) != 0;
      ip.id = load_be32(p + cur + 4);
      // An "atomic fragment" (offset 0, no more fragments) is a whole packet (RFC 6946).
      ip.is_fragment = ip.fragment_offset != 0 || ip.more_fragments;
      ip.non_first_fragment = ip.fragment_offset != 0;
      length = 8;
    } else if (next == 51) {
      length = (std::size_t{p[cur + 1]} + 2) * 4;  // AH counts 4-byte units, minus 2
    } else {
      length = (std::size_t{p[cur + 1]} + 1) * 8;  // other extensions count 8-byte units, minus 1
    }
    if (end - cur < length) return ParseStatus::truncated_ipv6_extension;
    next = p[cur];
    cur += length;
    if (ip.non_first_fragment) break;  // what follows is payload, not a header
  }
  ip.protocol = next;
  ip.header_end = cur;
  key.protocol = next;
  return ParseStatus::ok;
}

template <class Key>
void set_ports(Key& key, const std::uint8_t* src_port, const std::uint8_t* dst_port) {
  key.src_port = load_raw<std::uint16_t>(src_port);
  key.dst_port = load_raw<std::uint16_t>(dst_port);
}

// Reads the embedded original packet of an ICMP error, which is cut short by design: its header must be
// whole, and its first 8 transport bytes give the ports (or ICMP identifier). Returns whether a key with
// ports was found; the outer packet is valid either way.
template <class Key>
bool parse_embedded(const std::uint8_t* p, std::size_t off, std::size_t end, Key& key, ParsedPacket& out) {
  IpHeader ip;
  ParseStatus status;
  if constexpr (std::is_same_v<Key, FlowKeyV4>) {
    status = parse_ipv4_header(p, off, end, ip, key);
  } else {
    status = parse_ipv6_header(p, off, end, ip, key);
  }
  if (status != ParseStatus::ok || ip.non_first_fragment) return false;
  const std::size_t l4 = ip.header_end;
  if (end - l4 < 8) return false;
  out.embedded_l3_offset = static_cast<std::uint16_t>(off);
  out.embedded_l4_offset = static_cast<std::uint16_t>(l4);
  if (ip.protocol == ipproto::kTcp || ip.protocol == ipproto::kUdp) {
    set_ports(key, p + l4, p + l4 + 2);
  } else if ((ip.protocol == ipproto::kIcmp && is_icmpv4_query(p[l4])) ||
             (ip.protocol == ipproto::kIcmpV6 && is_icmpv6_query(p[l4]))) {
    set_ports(key, p + l4 + 4, p + l4 + 4);
  } else {
    return false;
  }
  return true;
}

// Parses the transport header at `l4` for either key type; `end` bounds the IP packet.
template <class Key>
ParseStatus parse_transport(const std::uint8_t* p, std::size_t l4, std::size_t end, Key& key, ParsedPacket& out) {
  out.l4_offset = static_cast<std::uint16_t>(l4);
  const std::size_t avail = end - l4;
  switch (key.protocol) {
    case ipproto::kTcp: {
      if (avail < 20) return ParseStatus::truncated_tcp;
      const std::size_t data_offset = static_cast<std::size_t>(p[l4 + 12] >> 4) * 4;
      if (data_offset < 20) return ParseStatus::bad_tcp_data_offset;
      if (avail < data_offset) return ParseStatus::truncated_tcp;
      set_ports(key, p + l4, p + l4 + 2);
      out.tcp_flags = p[l4 + 13];
      out.payload_offset = static_cast<std::uint16_t>(l4 + data_offset);
      out.has_ports = true;
      return ParseStatus::ok;
    }
    case ipproto::kUdp:
      if (avail < 8) return ParseStatus::truncated_udp;
      set_ports(key, p + l4, p + l4 + 2);
      out.payload_offset = static_cast<std::uint16_t>(l4 + 8);
      out.has_ports = true;
      return ParseStatus::ok;
    case ipproto::kIcmp:
    case ipproto::kIcmpV6: {
      if (avail < 8) return ParseStatus::truncated_icmp;
      const std::uint8_t type = p[l4];
      out.icmp_type = type;
      out.icmp_code = p[l4 + 1];
      out.payload_offset = static_cast<std::uint16_t>(l4 + 8);
      const bool v4 = key.protocol == ipproto::kIcmp;
      if (v4 ? is_icmpv4_query(type) : is_icmpv6_query(type)) {
        // The identifier stands in for both ports so that a request and its reply share one key.
        set_ports(key, p + l4 + 4, p + l4 + 4);
        out.icmp_is_query = true;
        out.has_ports = true;
      } else if (v4 ? is_icmpv4_error(type) : is_icmpv6_error(type)) {
        out.icmp_is_error = true;
        if constexpr (std::is_same_v<Key, FlowKeyV4>) {
          out.has_embedded = parse_embedded(p, l4 + 8, end, out.embedded_key4, out);
        } else {
          out.has_embedded = parse_embedded(p, l4 + 8, end, out.embedded_key6, out);
        }
      }
      return ParseStatus::ok;
    }
    default:
      return ParseStatus::ok;  // another protocol: a key without ports
  }
}

template <class Key>
ParseStatus parse_ip(const std::uint8_t* p, std::size_t off, std::size_t len, Key& key, ParsedPacket& out) {
  IpHeader ip;
  ParseStatus status;
  if constexpr (std::is_same_v<Key, FlowKeyV4>) {
    status = parse_ipv4_header(p, off, len, ip, key);
    if (status == ParseStatus::ok && ip.total_length < ip.header_end - off) {
      status = ParseStatus::bad_ipv4_total_length;
    }
  } else {
    status = parse_ipv6_header(p, off, len, ip, key);
  }
  out.ip_version = ip.version;
  if (status != ParseStatus::ok) return status;

  out.ip_total_length = ip.total_length;
  out.captured_truncated = off + ip.total_length > len;
  out.l3_end = static_cast<std::uint16_t>(std::min(off + ip.total_length, len));
  out.is_fragment = ip.is_fragment;
  out.ip_id = ip.id;
  out.fragment_offset = ip.fragment_offset;
  out.more_fragments = ip.more_fragments;
  // IPv6 extension headers may extend past the payload length the header announced.
  if (ip.header_end > out.l3_end) {
    return std::is_same_v<Key, FlowKeyV4> ? ParseStatus::truncated_ipv4 : ParseStatus::truncated_ipv6_extension;
  }
  if (ip.non_first_fragment) return ParseStatus::ok;  // no transport header in this fragment
  return parse_transport(p, ip.header_end, out.l3_end, key, out);
}

// The BSD loopback header's address family, as an EtherType (0 for any family but IPv4 and IPv6). DLT_NULL
// stores it in the byte order of the host that captured (either), DLT_LOOP in network order. IPv6 has
// three numbers, one per BSD family (24 NetBSD/OpenBSD, 28 FreeBSD, 30 macOS).
std::uint16_t ethertype_of_address_family(const std::uint8_t* header, bool network_order_only) {
  const std::uint32_t big = load_be32(header);
  const std::uint32_t little = std::uint32_t{header[0]} | std::uint32_t{header[1]} << 8 |
                               std::uint32_t{header[2]} << 16 | std::uint32_t{header[3]} << 24;
  const auto of = [](std::uint32_t family) -> std::uint16_t {
    if (family == 2) return kEtherTypeIpv4;
    if (family == 24 || family == 28 || family == 30) return kEtherTypeIpv6;
    return 0;
  };
  if (const std::uint16_t type = of(big); type != 0 || network_order_only) return type;
  return of(little);
}

// PPP: an optional HDLC address and control pair (0xff 0x03, absent under address-and-control-field
// compression), then the protocol, one byte when its low bit is set (protocol-field compression), else
// two. Sets the offset of the payload and its protocol as an EtherType (0 for any but IPv4 and IPv6);
// false when the header does not fit.
bool strip_ppp_header(const std::uint8_t* p, std::size_t len, std::size_t& off, std::uint16_t& ethertype) {
  off = len >= 2 && p[0] == 0xff && p[1] == 0x03 ? 2 : 0;
  if (len <= off) return false;
  std::uint16_t protocol;
  if (p[off] & 1) {
    protocol = p[off];
    off += 1;
  } else {
    if (len - off < 2) return false;
    protocol = load_be16(p + off);
    off += 2;
  }
  constexpr std::uint16_t kPppIpv4 = 0x0021, kPppIpv6 = 0x0057;
  ethertype = protocol == kPppIpv4 ? kEtherTypeIpv4 : protocol == kPppIpv6 ? kEtherTypeIpv6 : 0;
  return true;
}

}  // namespace

std::string_view parse_status_name(ParseStatus status) {
  static constexpr std::array<std::string_view, kParseStatusCount> kNames = {
      "ok",
      "truncated_link",
      "truncated_vlan",
      "too_many_vlan_tags",
      "unsupported_ethertype",
      "unsupported_link_protocol",
      "truncated_ipv4",
      "bad_ipv4_version",
      "bad_ipv4_header_length",
      "bad_ipv4_total_length",
      "truncated_ipv6",
      "bad_ipv6_version",
      "truncated_ipv6_extension",
      "too_many_ipv6_extensions",
      "bad_ip_version",
      "truncated_tcp",
      "bad_tcp_data_offset",
      "truncated_udp",
      "truncated_icmp",
  };
  const auto index = static_cast<std::size_t>(status);
  return index < kNames.size() ? kNames[index] : "unknown";
}

ParseStatus parse_frame_general(std::span<const std::uint8_t> frame, LinkType link, ParsedPacket& out) {
  out = ParsedPacket{};
  const std::uint8_t* p = frame.data();
  const std::size_t len = std::min(frame.size(), parser_detail::kMaxFrameBytes);
  std::size_t off = 0;
  std::uint16_t ethertype = 0;

  switch (link) {
    case LinkType::ethernet:
      if (len < 14) return ParseStatus::truncated_link;
      ethertype = load_be16(p + 12);
      off = 14;
      while (ethertype == kEtherTypeVlan || ethertype == kEtherTypeQinQ || ethertype == kEtherTypeQinQLegacy) {
        if (out.vlan_count == kMaxVlanTags) return ParseStatus::too_many_vlan_tags;
        if (len - off < 4) return ParseStatus::truncated_vlan;
        out.vlan_ids[out.vlan_count++] = load_be16(p + off) & 0x0fff;
        ethertype = load_be16(p + off + 2);
        off += 4;
      }
      break;
    case LinkType::raw_ip:
      if (len < 1) return ParseStatus::truncated_link;
      switch (p[0] >> 4) {
        case 4: ethertype = kEtherTypeIpv4; break;
        case 6: ethertype = kEtherTypeIpv6; break;
        default: return ParseStatus::bad_ip_version;
      }
      break;
    case LinkType::linux_sll:
      if (len < 16) return ParseStatus::truncated_link;
      ethertype = load_be16(p + 14);
      off = 16;
      break;
    case LinkType::linux_sll2:
      if (len < 20) return ParseStatus::truncated_link;
      ethertype = load_be16(p);
      off = 20;
      break;
    case LinkType::bsd_null:
    case LinkType::bsd_loop:
      if (len < 4) return ParseStatus::truncated_link;
      ethertype = ethertype_of_address_family(p, link == LinkType::bsd_loop);
      off = 4;
      break;
    case LinkType::ppp:
      if (!strip_ppp_header(p, len, off, ethertype)) return ParseStatus::truncated_link;
      break;
    case LinkType::cisco_hdlc:
      if (len < 4) return ParseStatus::truncated_link;
      ethertype = load_be16(p + 2);
      off = 4;
      break;
  }

  out.l3_offset = static_cast<std::uint16_t>(off);
  if (ethertype == kEtherTypeIpv4) return parse_ip(p, off, len, out.key4, out);
  if (ethertype == kEtherTypeIpv6) return parse_ip(p, off, len, out.key6, out);
  return link == LinkType::ethernet ? ParseStatus::unsupported_ethertype : ParseStatus::unsupported_link_protocol;
}

bool same_meaning(const ParsedPacket& a, const ParsedPacket& b) {
  const auto always = [](const ParsedPacket& p) {
    return std::tie(p.key4, p.ip_version, p.l3_offset, p.l4_offset, p.payload_offset, p.l3_end, p.ip_total_length,
                    p.captured_truncated, p.vlan_count, p.is_fragment, p.has_ports, p.ip_id, p.fragment_offset,
                    p.more_fragments, p.tcp_flags, p.icmp_type, p.icmp_code, p.icmp_is_query, p.icmp_is_error,
                    p.has_embedded);
  };
  if (always(a) != always(b)) return false;
  if (a.ip_version == 6 && a.key6 != b.key6) return false;
  for (std::size_t i = 0; i < a.vlan_count; ++i) {
    if (a.vlan_ids[i] != b.vlan_ids[i]) return false;
  }
  if (!a.has_embedded) return true;
  return std::tie(a.embedded_l3_offset, a.embedded_l4_offset, a.embedded_key4, a.embedded_key6) ==
         std::tie(b.embedded_l3_offset, b.embedded_l4_offset, b.embedded_key4, b.embedded_key6);
}

}  // namespace flowtrack
