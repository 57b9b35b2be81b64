// In-place header rewrites for NAT and load balancing that keep every checksum right incrementally
// (RFC 1624), so a rewrite costs a few instructions instead of a pass over the payload.
//
// All take the frame and the ParsedPacket that parse_frame produced for it, and new values in network
// byte order (as keys hold them). Checksums that are absent stay absent: an IPv4 UDP checksum of 0
// means "none" and is left 0; a recomputed UDP checksum of 0 is written as 0xffff. A non-first fragment
// has no transport header, so only the IP header is touched.
#pragma once

#include <cstdint>
#include <span>

#include "flowtrack/packet/parser.hpp"

namespace flowtrack {

void rewrite_ipv4_src(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint32_t new_addr);
void rewrite_ipv4_dst(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint32_t new_addr);

// TCP/UDP ports. Does nothing for packets without a transport header.
void rewrite_src_port(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint16_t new_port);
void rewrite_dst_port(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint16_t new_port);

// The identifier of an ICMP/ICMPv6 query (echo request/reply and friends).
void rewrite_icmp_identifier(std::span<std::uint8_t> frame, const ParsedPacket& packet, std::uint16_t new_id);

// A whole IPv4 endpoint, as a NAT translates it: the address and the port (TCP, UDP) or the query's
// identifier (ICMP), with each checksum updated once for both. The same bytes as the address rewrite
// followed by the port or identifier rewrite.
enum class Endpoint : std::uint8_t { source, destination };
void rewrite_ipv4_endpoint(std::span<std::uint8_t> frame, const ParsedPacket& packet, Endpoint which,
                           std::uint32_t new_addr, std::uint16_t new_port);

// An ICMPv4 error quotes the packet that caused it. A NAT translating the error must translate the
// quoted packet too (RFC 5508 section 4.1): these rewrite its source or destination endpoint, the
// address and the port (or, for a quoted ICMP query, the identifier), and keep right the quoted IP
// header checksum, the quoted transport checksum when it was quoted (as the checksum of the whole
// original packet), and the outer ICMP checksum, which covers all of them. Nothing happens unless the
// packet is an ICMPv4 error whose quoted packet parsed (packet.has_embedded).
enum class QuotedEndpoint : std::uint8_t { source, destination };
void rewrite_quoted_endpoint(std::span<std::uint8_t> frame, const ParsedPacket& packet, QuotedEndpoint which,
                             std::uint32_t new_addr, std::uint16_t new_port);

}  // namespace flowtrack
