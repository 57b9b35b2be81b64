// How a load balancer sends a service's packets to a backend (its forwarding mode, per service):
//
//   nat   the destination becomes the backend's address and port; the backend answers the balancer,
//         which gives the answer the VIP back (every answer returns through the balancer).
//   ipip  IPv4 in IPv4 (RFC 2003): an outer IPv4 header from the tunnel's source to the backend, protocol
//         4, before the client's packet, which keeps the VIP as its destination.
//   gue   Generic UDP Encapsulation, variant 1 (draft-ietf-intarea-gue section 3.3: the UDP payload is
//         the IP packet itself, no GUE header): an outer IPv4 header and a UDP header to the tunnel's
//         port on the backend, before the client's packet. The UDP source port comes from the flow's
//         hash (gue_source_port), so that it is the same for every packet of a connection and differs
//         between connections: the backend's receive-side scaling, which hashes the outer headers,
//         spreads connections over its queues. The UDP checksum is 0 (none), as RFC 768 allows over
//         IPv4: the inner packet carries its own checksums.
//
// In both tunnel modes the backend holds the VIP on an interface of its own, takes the inner packet off
// (a kernel ipip or fou device, or flowtrack-decap where the kernel has neither) and answers the client
// from the VIP directly: direct server return. The balancer sees the clients' packets only.
//
// Never fragmented: an outer packet may not exceed the path's MTU, so a packet that would is refused and
// counted (NfDrop::too_big); when the client set DF, it is answered with ICMP "fragmentation needed"
// (type 3, code 4, RFC 1191) naming the MTU that fits (the path's MTU minus the encapsulation), from the
// VIP, so that the client's path MTU discovery sends smaller segments. The outer header sets DF and
// copies the inner packet's DSCP and ECN bits (RFC 6040's normal mode).
//
// The packet grows in place, at its front when its buffer has headroom (NfPacket::headroom, as DPDK's
// mbufs and the replay's buffers have): the link header moves down by the encapsulation's size and the
// outer headers go between it and the IP packet, which stays where it lies, so that a packet costs the
// move of its 14-byte link header whatever its length. A buffer without headroom takes the headers behind
// the link header instead, within its room after the packet (NfPacket::capacity): the whole IP packet
// moves up. One with neither is refused (NfDrop::no_room).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "flowtrack/nf/nf_packet.hpp"

namespace flowtrack {

enum class ForwardMode : std::uint8_t { nat, ipip, gue };

std::optional<ForwardMode> forward_mode_from_name(std::string_view name);
std::string_view forward_mode_name(ForwardMode mode);

inline constexpr std::uint16_t kDefaultGuePort = 6080;
inline constexpr std::uint16_t kDefaultTunnelMtu = 1500;

struct TunnelConfig {
  ForwardMode mode = ForwardMode::nat;
  std::uint32_t source = 0;                              // network order: the outer source address
  std::uint16_t gue_port = to_network16(kDefaultGuePort);  // network order: the outer UDP destination
  std::uint16_t mtu = kDefaultTunnelMtu;                 // the largest IP packet the path to the backends takes
  bool tunnels() const { return mode != ForwardMode::nat; }
};

// The bytes a mode puts before the client's packet: 0, 20 (IPv4), 28 (IPv4 and UDP).
constexpr std::size_t tunnel_overhead(ForwardMode mode) {
  return mode == ForwardMode::ipip ? 20 : mode == ForwardMode::gue ? 28 : 0;
}

inline constexpr std::size_t kMaxTunnelOverhead = tunnel_overhead(ForwardMode::gue);

// GUE's UDP source port for a flow hash (network order): the hash mixed, its 15 low bits in the upper
// half of the port space, 32768-65535 (a range of dynamic ports, RFC 6335, wider than 49152-65535, so
// that a thousand flows rarely share one).
std::uint16_t gue_source_port(std::uint32_t flow_hash);

enum class TunnelOutcome : std::uint8_t {
  sent,     // encapsulated: the frame (which may start earlier) and the wire length grew by the overhead
  too_big,  // the outer packet would exceed the MTU; the frame is untouched
  no_room,  // the buffer has no room for the outer headers; the frame is untouched
};

// Whether `packet`'s buffer takes `overhead` more bytes before its IP packet: in its headroom, or else
// after the packet.
inline bool has_room_for(const NfPacket& packet, std::size_t overhead) {
  return overhead <= packet.headroom || packet.frame.size() + overhead <= packet.room();
}

// Asks for the cache line before `packet`'s frame, where encapsulate() puts the outer headers when the
// buffer has headroom: for a function to call once it knows the packet goes into a tunnel, a stage
// before it writes there (as the runtime asks for the frame's own first line a burst ahead). That line
// is the only one a tunnel writes that nothing before it has read.
inline void prefetch_outer_headers(const NfPacket& packet) {
  if (packet.headroom >= kMaxTunnelOverhead) __builtin_prefetch(packet.frame.data() - kMaxTunnelOverhead, 1);
}

// Writes the outer headers of `tunnel`'s mode (tunnel_overhead(mode) bytes at `out`) for an inner IPv4
// packet of `inner_length` bytes whose TOS byte is `tos`, from `source` to `backend` (network order),
// with `flow_hash` for GUE's source port: what encapsulate() puts before a client's packet, and the
// health checks before a probe's (runtime/probe_tunnel.hpp).
void write_tunnel_headers(std::uint8_t* out, const TunnelConfig& tunnel, std::uint32_t source, std::uint32_t backend,
                          std::size_t inner_length, std::uint8_t tos, std::uint32_t flow_hash);

// Puts the IPv4 packet of `packet` (parsed: IPv4) in the tunnel to `backend` (network order), with
// `flow_hash` for GUE's source port. Afterwards the frame holds the link header, the outer headers from
// `packet.parsed.l3_offset` on, then the inner packet; `packet.parsed` still describes the inner packet
// (its key and lengths), whose headers now lie the overhead further into the frame than its offsets say.
TunnelOutcome encapsulate(NfPacket& packet, const TunnelConfig& tunnel, std::uint32_t backend, std::uint32_t flow_hash);

// Whether a balancer's packet to a backend of a service forwarding by `tunnel` goes out: always in NAT
// mode; in a tunnel when it fits the MTU and its buffer once encapsulated (else encapsulate() refuses
// it). A backend's traffic counts only the packets that go out.
inline bool reaches_backend(const NfPacket& packet, const TunnelConfig& tunnel) {
  if (!tunnel.tunnels()) return true;
  const std::size_t overhead = tunnel_overhead(tunnel.mode);
  return packet.parsed.ip_total_length + overhead <= tunnel.mtu && has_room_for(packet, overhead);
}

// A load balancer's whole answer for a packet to a tunnel-mode backend, counted in `counters`: forward
// (encapsulated: a rewrite), reply (too big with DF: the ICMP answer; the drop is counted all the same),
// or drop (NfDrop::too_big, or NfDrop::no_room).
Verdict send_through_tunnel(NfPacket& packet, const TunnelConfig& tunnel, std::uint32_t backend, NfCounters& counters);

// The inner IPv4 packet of a tunnelled packet, as a backend takes it off: `outer` starts with the outer
// IPv4 header (what a raw socket of protocol 4 receives). Empty unless the outer header is a whole IPv4
// header of protocol 4 (IPIP) and what follows it is one whole IPv4 packet (its header checked, its total
// length within the bytes given). Trailing bytes after the inner packet are left out.
std::span<const std::uint8_t> ipip_inner(std::span<const std::uint8_t> outer);

// The same for a UDP payload (GUE variant 1 as a UDP socket receives it): the payload when it is one
// whole IPv4 packet, else empty.
std::span<const std::uint8_t> gue_inner(std::span<const std::uint8_t> payload);

}  // namespace flowtrack
