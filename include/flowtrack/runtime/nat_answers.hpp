// How an inside capture's inbound packets reached the NAT (replay_rehearsal.hpp): a captured inbound
// packet (remote -> inside host) reached the NAT addressed to the external endpoint of its session, so
// its destination becomes that endpoint (checksums kept). One whose connection has no session (never
// opened from inside, or ended) cannot be presented: the replay leaves it out and counts it.
#pragma once

#include "flowtrack/nf/nat44.hpp"
#include "flowtrack/runtime/replay_rehearsal.hpp"

namespace flowtrack {

class NatAnswers {
 public:
  explicit NatAnswers(LinkType link) : link_(link) {}

  template <class Nat>
  Presented operator()(NfPacket& packet, const Nat& nat) const {
    const ParsedPacket& p = packet.parsed;
    if (p.ip_version != 4 || p.icmp_is_error || !p.has_ports || nat.is_inside(p.key4.src_addr) ||
        !nat.is_inside(p.key4.dst_addr)) {
      return Presented::as_captured;
    }
    std::uint32_t addr;
    std::uint16_t port;
    if (!nat.external_endpoint_of(p.key4, addr, port)) return Presented::unpresentable;
    rewrite_ipv4_dst(packet.frame, p, addr);
    if (p.icmp_is_query) rewrite_icmp_identifier(packet.frame, p, port);
    else rewrite_dst_port(packet.frame, p, port);
    return parse_frame(packet.frame, link_, packet.parsed) == ParseStatus::ok ? Presented::rewritten : Presented::unpresentable;
  }

 private:
  LinkType link_;
};

}  // namespace flowtrack
