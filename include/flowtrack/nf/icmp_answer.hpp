// A network function's own ICMPv4 error about a packet it refuses (a NAT out of ports answering
// "communication administratively prohibited", RFC 6888 REQ-11 / RFC 1812 section 5.2.7.1), built in
// place over the refused packet so that nothing is allocated.
//
// The answer keeps the link header (an Ethernet one with its two MAC addresses swapped, so it goes back
// to the station that sent the packet; the VLAN tags and the EtherType stay), then a new IPv4 header
// from `source` to the packet's sender, the ICMP header, and the quote RFC 792 asks for: the refused
// packet's IP header and the first 8 bytes after it (its ports). Every checksum is computed in full.
#pragma once

#include <cstdint>

#include "flowtrack/nf/nf_packet.hpp"

namespace flowtrack {

namespace icmp4 {
inline constexpr std::uint8_t kDestinationUnreachable = 3;
inline constexpr std::uint8_t kFragmentationNeeded = 4;         // code of kDestinationUnreachable (DF set)
inline constexpr std::uint8_t kAdministrativelyProhibited = 13;  // code of kDestinationUnreachable
}  // namespace icmp4

// Rewrites `packet` into the ICMPv4 error (type, code) that answers it, from `source` (network order):
// `packet.frame` then spans the answer and `packet.wire_length` is its length (`packet.parsed` still
// describes the refused packet). Returns false, leaving the packet untouched, when the answer does not
// fit in packet.room(), or when no error may answer the packet (RFC 1122 section 3.2.2): it is not
// IPv4, is itself an ICMP error, or is a non-first fragment. `next_hop_mtu` fills the 16 bits that
// "fragmentation needed" gives it (RFC 1191 section 4); 0 for every other error.
bool answer_with_icmp_error(NfPacket& packet, std::uint8_t type, std::uint8_t code, std::uint32_t source,
                            std::uint16_t next_hop_mtu = 0);

}  // namespace flowtrack
