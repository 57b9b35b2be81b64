// What every network function sees and returns: a parsed packet whose frame it may rewrite in place,
// with its arrival time and flow hash, a verdict, and drop reasons counted per function.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "flowtrack/nf/port_role.hpp"
#include "flowtrack/packet/parser.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

struct NfPacket {
  std::span<std::uint8_t> frame;  // writable; rewrites keep every checksum right (packet/rewrite.hpp)
  ParsedPacket parsed;            // parse_frame's result for `frame` (status ok)
  std::uint32_t wire_length = 0;
  // Bytes writable from frame.data(), at least frame.size() (0 means frame.size()): a function that
  // answers a packet with a longer one (an ICMP error quoting it) may build it in place up to this.
  std::size_t capacity = 0;
  // Bytes writable before frame.data(), as a DPDK mbuf's headroom or XDP's before the packet: a function
  // that puts headers before the packet's own (a tunnel's) may start the frame up to this many bytes
  // earlier, lowering `headroom` and raising `capacity` by as much (the buffer's end stays). The output
  // takes the frame where it then starts.
  std::uint16_t headroom = 0;
  Nanos time = 0;          // arrival; non-decreasing along a function's packets
  std::uint32_t hash = 0;  // flow_hash(parsed.key4) for an IPv4 packet (packet_hash()), else 0
  std::uint32_t slot = 0;  // which buffer of its source the packet is in (the source's own numbering)
  // The role of the port it arrived on (port_role.hpp), set by live ports; unknown on a replay.
  PortRole arrival = PortRole::unknown;

  std::size_t room() const { return capacity > frame.size() ? capacity : frame.size(); }

  // Starts the frame `bytes` earlier, into the headroom (at most `headroom`), its end where it was.
  void grow_front(std::size_t bytes) {
    const std::size_t end_of_room = room();
    frame = {frame.data() - bytes, frame.size() + bytes};
    capacity = end_of_room + bytes;
    headroom = static_cast<std::uint16_t>(headroom - bytes);
  }
};

// forward: `frame` goes on, possibly rewritten. drop: nothing goes out. reply: `frame` (possibly
// regrown within capacity, wire_length updated) now holds an answer for the sender, sent back out the
// side the packet came in, and the packet itself goes no further. held: the function kept a copy of
// the packet (a fragment waiting for the fragment that names its flow) and hands it out later.
//
// A held packet goes on later through the output of the burst that releases it (network_function.hpp).
enum class Verdict : std::uint8_t { forward, drop, reply, held };

enum class NfDrop : std::uint8_t {
  no_backend,      // a new connection to a service with no backend that takes new connections
  table_full,      // a new connection found no room in the connection table
  tuple_conflict,  // a new connection's reply tuple belongs to another connection
  non_syn_first,   // LB: a TCP packet without SYN for no tracked connection, with non_syn_first = "drop"
  no_port,         // NAT: no external port left for a new mapping (exhaustion)
  port_quota,      // NAT: the inside address already holds its quota of mappings of the protocol
  fragment_full,   // NAT: no room to remember a fragmented datagram or to hold a fragment for its first one
  fragment_timeout,  // NAT: a held fragment whose datagram's first fragment did not come in time
  no_mapping,      // NAT: an inbound packet for no mapping (unsolicited)
  filtered,        // NAT: an inbound packet the address-dependent filter refuses
  untranslatable,  // NAT: a packet without ports, or an ICMP error about no session (or from its wrong side)
  log_full,        // NAT: a new port block whose log record the control plane has no room for yet
  not_to_pool,     // NAT: arrived on the outside port, not addressed to a pool address (to an inside host, or through)
  spoofed_source,  // NAT: a source the port cannot have: on the inside port not of the inside network, on the
                   // outside port of the inside network or the pool (BCP 38)
  not_to_service,  // LB: arrived on the clients port, not to a service (to a backend, or anything but a VIP:port)
  too_big,         // LB, tunnel mode: the encapsulated packet would exceed the path's MTU (nf/tunnel.hpp)
  no_room,         // LB, tunnel mode: the packet's buffer has no room for the tunnel's headers
  not_ipv4,        // a function that handles IPv4 packets only was given another (the flow meter)
  count_,
};

inline constexpr std::size_t kNfDropCount = static_cast<std::size_t>(NfDrop::count_);

std::string_view nf_drop_name(NfDrop drop);

struct NfCounters {
  std::uint64_t forwarded = 0;
  std::uint64_t rewritten = 0;     // forwarded after a rewrite
  std::uint64_t passed = 0;        // forwarded untouched: not for this function (no service, no mapping)
  std::uint64_t connections_created = 0;
  std::uint64_t connections_expired = 0;
  std::array<std::uint64_t, kNfDropCount> drops{};

  // Each counts one packet and returns its verdict, so a function ends a path with `return counters_.x()`.
  Verdict drop(NfDrop reason) {
    ++drops[static_cast<std::size_t>(reason)];
    return Verdict::drop;
  }
  Verdict pass() {
    ++passed;
    ++forwarded;
    return Verdict::forward;
  }
  Verdict rewrite() {
    ++rewritten;
    ++forwarded;
    return Verdict::forward;
  }

  NfCounters& operator+=(const NfCounters& other);
};

}  // namespace flowtrack
