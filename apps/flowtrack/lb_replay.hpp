// Replaying a trace captured on the client side of a load balancer (as the campus trace is: clients
// talk to the VIPs and the VIPs answer). Packets to a VIP go through the balancer as they are. An
// answer in such a trace shows what the balancer delivered, VIP -> client; what reached the balancer
// came from the backend the connection was given. This adapter restores that (source rewritten to the
// backend's address and port, checksums kept) and hands the packet to the balancer, whose reverse path
// must turn it back into the captured packet. An answer whose connection the balancer does not track
// (it never saw the connection open, or forwarded it statelessly) goes to the balancer unchanged.
#pragma once

#include <absl/container/flat_hash_set.h>

#include "flowtrack/nf/stateful_lb.hpp"

namespace flowtrack::cli {

template <class Table, class Aging>
class LbClientSideReplay {
 public:
  LbClientSideReplay(const StatefulLbConfig& config, Nanos start) : lb_(config, start) {
    for (const ServiceConfig& s : config.services) services_.insert(endpoint_key(s.vip, s.port, s.protocol));
  }

  Verdict process(NfPacket& packet, Nanos now) {
    const ParsedPacket& p = packet.parsed;
    // Only answers (from a service's endpoint) are looked up: the replay must not add a table probe
    // to the packets the balancer sees as they are.
    if (p.ip_version == 4 && p.has_ports && !p.icmp_is_error &&
        services_.contains(endpoint_key(p.key4.src_addr, p.key4.src_port, p.key4.protocol))) {
      // An answer's reversed tuple is the connection's original tuple (client -> VIP).
      const FlowKeyV4 original = p.key4.reversed();
      const ConnMatch match = lb_.tracker().find(original, flow_hash(original));
      if (match && match.direction == Direction::original) {
        const LbAssignment a = lb_.assignment(match.conn);
        const BackendConfig& backend = lb_.services()[a.service].backends()[a.backend].config;
        rewrite_ipv4_src(packet.frame, p, backend.address);
        if (backend.port != 0) rewrite_src_port(packet.frame, p, backend.port);
        if (parse_frame(packet.frame, link_, packet.parsed) != ParseStatus::ok) return Verdict::drop;
      }
    }
    return lb_.process(packet, now);
  }

  std::size_t expire(Nanos now, std::size_t budget = kDefaultExpireBudget) { return lb_.expire(now, budget); }
  const NfCounters& counters() const { return lb_.counters(); }
  const StatefulLb<Table, Aging>& lb() const { return lb_; }
  void set_link(LinkType link) { link_ = link; }

 private:
  StatefulLb<Table, Aging> lb_;
  absl::flat_hash_set<std::uint64_t> services_;  // (VIP, port, protocol) of every service
  LinkType link_ = LinkType::ethernet;
};

}  // namespace flowtrack::cli
