// Test frames for every link type: an IP packet behind the header its link type puts before it, the
// way a capture of that link type holds it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/packet/link_type.hpp"

namespace flowtrack::testing {

// `ip` behind `link`'s header (nothing for raw_ip). Ethernet is not covered here: frame_builder builds
// Ethernet frames itself. BSD NULL is written in little-endian order, as x86 hosts capture it.
inline std::vector<std::uint8_t> behind_link_header(LinkType link, std::span<const std::uint8_t> ip) {
  const bool v6 = !ip.empty() && (ip[0] >> 4) == 6;
  std::vector<std::uint8_t> header;
  switch (link) {
    case LinkType::ethernet:
    case LinkType::raw_ip: break;
    case LinkType::linux_sll:
      header.assign(16, 0);
      header[14] = v6 ? 0x86 : 0x08;
      header[15] = v6 ? 0xdd : 0x00;
      break;
    case LinkType::linux_sll2:
      header.assign(20, 0);
      header[0] = v6 ? 0x86 : 0x08;
      header[1] = v6 ? 0xdd : 0x00;
      break;
    case LinkType::bsd_null: header = {static_cast<std::uint8_t>(v6 ? 30 : 2), 0, 0, 0}; break;
    case LinkType::bsd_loop: header = {0, 0, 0, static_cast<std::uint8_t>(v6 ? 24 : 2)}; break;
    case LinkType::ppp: header = {0xff, 0x03, 0x00, static_cast<std::uint8_t>(v6 ? 0x57 : 0x21)}; break;
    case LinkType::cisco_hdlc:
      header = {0x0f, 0x00, static_cast<std::uint8_t>(v6 ? 0x86 : 0x08), static_cast<std::uint8_t>(v6 ? 0xdd : 0x00)};
      break;
  }
  header.insert(header.end(), ip.begin(), ip.end());
  return header;
}

}  // namespace flowtrack::testing
