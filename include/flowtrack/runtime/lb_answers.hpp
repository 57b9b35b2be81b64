// How a client-side capture's answers reached the stateful LB (replay_rehearsal.hpp): an answer in the
// capture comes from a VIP; what reached the balancer came from the backend its connection was given,
// so its source becomes that backend's address and port (checksums kept). An answer of no connection
// the balancer tracks (it never saw it open, or forwarded it without state) reached it as captured.
#pragma once

#include "flowtrack/nf/service_index.hpp"
#include "flowtrack/nf/stateful_lb.hpp"
#include "flowtrack/runtime/replay_rehearsal.hpp"

namespace flowtrack {

class LbAnswers {
 public:
  LbAnswers(const StatefulLbConfig& config, LinkType link) : link_(link) {
    for (const ServiceConfig& s : config.services) services_.add(s);
  }

  template <class Lb>
  Presented operator()(NfPacket& packet, const Lb& lb) const {
    const ParsedPacket& p = packet.parsed;
    if (p.ip_version != 4 || !p.has_ports || p.icmp_is_error ||
        !services_.contains(p.key4.src_addr, p.key4.src_port, p.key4.protocol)) {
      return Presented::as_captured;
    }
    // An answer's reversed tuple is the connection's original tuple (client -> VIP).
    const FlowKeyV4 original = p.key4.reversed();
    const ConnMatch match = lb.tracker().find(original, flow_hash(original));
    if (!match || match.direction != Direction::original) return Presented::as_captured;
    const LbAssignment a = lb.assignment(match.conn);
    const BackendConfig& backend = lb.services()[a.service].backends()[a.backend].config;
    rewrite_ipv4_src(packet.frame, p, backend.address);
    if (backend.port != 0) rewrite_src_port(packet.frame, p, backend.port);
    return parse_frame(packet.frame, link_, packet.parsed) == ParseStatus::ok ? Presented::rewritten : Presented::unpresentable;
  }

 private:
  ServiceIndex services_;
  LinkType link_;
};

}  // namespace flowtrack
