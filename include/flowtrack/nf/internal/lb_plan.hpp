// What a load balancer's state stage decides for a packet, for its rewrite stage to carry out: the
// verdict when it is already final (passed, dropped, or forwarded as it came), else the rewrite, taken
// when the state stage ran (a pool change due at a later packet of the burst must not reach it).
#pragma once

#include <cstdint>

#include "flowtrack/nf/backend_pool.hpp"
#include "flowtrack/nf/nf_packet.hpp"
#include "flowtrack/nf/tunnel.hpp"
#include "flowtrack/packet/rewrite.hpp"

namespace flowtrack {

struct LbPlan {
  Verdict verdict = Verdict::forward;
  bool rewrites = false;
  bool to_backend = false;  // else back to the VIP: the source becomes (address, port)
  std::uint32_t address = 0;
  std::uint16_t port = 0;   // 0: leave the port (a backend without a port of its own)
  // To the backend (`address`) of a tunnel-mode service: the packet is encapsulated, not rewritten.
  const TunnelConfig* tunnel = nullptr;
};

// The plan for a client's packet to backend `b` of a service forwarding by `tunnel`: its destination
// rewritten (NAT mode), or the packet encapsulated, whose outer headers' line is asked for now.
inline LbPlan plan_to_backend(const NfPacket& packet, const BackendConfig& b, const TunnelConfig& tunnel) {
  if (!tunnel.tunnels()) return {.rewrites = true, .to_backend = true, .address = b.address, .port = b.port};
  prefetch_outer_headers(packet);
  return {.rewrites = true, .to_backend = true, .address = b.address, .port = b.port, .tunnel = &tunnel};
}

// Carries the plan out and returns the packet's verdict, counting what it does in `counters`: the plan's
// own verdict when it rewrites nothing (counted when it was taken); else a rewrite (address and port
// change in one rewrite, each checksum updated once; a packet without ports, ICMP or a later fragment,
// or a plan that keeps the port has its address rewritten alone), or the tunnel's answer.
inline Verdict apply_lb_plan(NfPacket& packet, const LbPlan& plan, NfCounters& counters) {
  if (!plan.rewrites) return plan.verdict;
  if (plan.tunnel != nullptr) return send_through_tunnel(packet, *plan.tunnel, plan.address, counters);
  rewrite_ipv4_address_and_port(packet.frame, packet.parsed, plan.to_backend ? Endpoint::destination : Endpoint::source,
                                plan.address, plan.port);
  return counters.rewrite();
}

}  // namespace flowtrack
