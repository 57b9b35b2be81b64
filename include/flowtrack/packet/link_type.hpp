// How a captured frame begins: the link-layer framing the parser must strip before the IP header.
#pragma once

#include <cstdint>

namespace flowtrack {

enum class LinkType : std::uint8_t {
  ethernet,   // DLT_EN10MB: Ethernet II, optionally 802.1Q / QinQ tagged
  raw_ip,     // DLT_RAW, LINKTYPE_IPV4, LINKTYPE_IPV6: the frame starts at the IP header
  linux_sll,  // DLT_LINUX_SLL: Linux "cooked" capture v1 (16-byte header)
  linux_sll2, // DLT_LINUX_SLL2: Linux "cooked" capture v2 (20-byte header)
};

}  // namespace flowtrack
