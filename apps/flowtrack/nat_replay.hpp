// Replaying a trace captured on the NAT's inside link (as the campus trace is: clients' own
// addresses in both directions). Outbound packets go through the NAT as they are. An inbound packet in
// such a trace shows what the NAT delivered, remote -> inside host; what reached the NAT was addressed
// to the external endpoint of its session. This adapter restores that (destination rewritten to the
// external endpoint, checksums kept) and hands the packet to the NAT, whose inbound translation must
// turn it back into the captured packet. A captured inbound packet whose connection has no session
// (it was never opened from inside, or has expired) is dropped and counted as no_mapping.
#pragma once

#include "flowtrack/nf/nat44.hpp"

namespace flowtrack::cli {

template <class Table, class Aging>
class NatInsideReplay {
 public:
  NatInsideReplay(const NatConfig& config, unsigned core, unsigned cores, Nanos start) : nat_(config, core, cores, start) {}

  Verdict process(NfPacket& packet, Nanos now) {
    const ParsedPacket& p = packet.parsed;
    if (p.ip_version == 4 && !p.icmp_is_error && p.has_ports && !nat_.is_inside(p.key4.src_addr) &&
        nat_.is_inside(p.key4.dst_addr)) {
      std::uint32_t addr;
      std::uint16_t port;
      if (!nat_.external_endpoint_of(p.key4, addr, port)) {
        ++unmatched_;
        return Verdict::drop;
      }
      rewrite_ipv4_dst(packet.frame, p, addr);
      if (p.icmp_is_query) rewrite_icmp_identifier(packet.frame, p, port);
      else rewrite_dst_port(packet.frame, p, port);
      const LinkType link = link_;
      if (parse_frame(packet.frame, link, packet.parsed) != ParseStatus::ok) return Verdict::drop;
    }
    return nat_.process(packet, now);
  }

  std::size_t expire(Nanos now, std::size_t budget = kDefaultExpireBudget) { return nat_.expire(now, budget); }
  template <class Emit>
  void release(Emit&& emit) {
    nat_.release(emit);
  }

  NfCounters counters() const {
    NfCounters c = nat_.counters();
    c.drops[static_cast<std::size_t>(NfDrop::no_mapping)] += unmatched_;
    return c;
  }
  const Nat44<Table, Aging>& nat() const { return nat_; }
  void set_link(LinkType link) { link_ = link; }

 private:
  Nat44<Table, Aging> nat_;
  std::uint64_t unmatched_ = 0;
  LinkType link_ = LinkType::ethernet;
};

}  // namespace flowtrack::cli
