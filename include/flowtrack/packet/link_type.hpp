// How a captured frame begins: the link-layer framing the parser must strip before the IP header.
#pragma once

#include <array>
#include <cstdint>

namespace flowtrack {

enum class LinkType : std::uint8_t {
  ethernet,    // DLT_EN10MB: Ethernet II, optionally 802.1Q / QinQ tagged
  raw_ip,      // DLT_RAW, LINKTYPE_IPV4, LINKTYPE_IPV6: the frame starts at the IP header
  linux_sll,   // DLT_LINUX_SLL: Linux "cooked" capture v1 (16-byte header)
  linux_sll2,  // DLT_LINUX_SLL2: Linux "cooked" capture v2 (20-byte header)
  bsd_null,    // DLT_NULL: BSD loopback, a 4-byte address family in the capturing host's byte order
  bsd_loop,    // DLT_LOOP: OpenBSD loopback, the same 4-byte address family in network byte order
  ppp,         // DLT_PPP, DLT_PPP_SERIAL: PPP, with or without the HDLC address and control bytes
  cisco_hdlc,  // DLT_C_HDLC: Cisco HDLC, address, control and an EtherType (4 bytes)
};

inline constexpr std::array kLinkTypes{LinkType::ethernet, LinkType::raw_ip,   LinkType::linux_sll, LinkType::linux_sll2,
                                       LinkType::bsd_null, LinkType::bsd_loop, LinkType::ppp,       LinkType::cisco_hdlc};

}  // namespace flowtrack
