// What a load balancer's state stage decides for a packet, for its rewrite stage to carry out: the
// verdict when it is already final (passed, dropped, or forwarded as it came), else the rewrite, taken
// when the state stage ran (a pool change due at a later packet of the burst must not reach it).
#pragma once

#include <cstdint>

#include "flowtrack/nf/nf_packet.hpp"
#include "flowtrack/packet/rewrite.hpp"

namespace flowtrack {

struct LbPlan {
  Verdict verdict = Verdict::forward;
  bool rewrites = false;
  bool to_backend = false;  // else back to the VIP: the source becomes (address, port)
  std::uint32_t address = 0;
  std::uint16_t port = 0;   // 0: leave the port (a backend without a port of its own)
};

// Rewrites the packet as planned; false when the plan rewrites nothing (its verdict stands). Address and
// port change in one rewrite (each checksum updated once); a packet without ports (ICMP, a later
// fragment) or a plan that keeps the port has its address rewritten alone.
inline bool apply_lb_plan(NfPacket& packet, const LbPlan& plan) {
  if (!plan.rewrites) return false;
  rewrite_ipv4_address_and_port(packet.frame, packet.parsed, plan.to_backend ? Endpoint::destination : Endpoint::source,
                                plan.address, plan.port);
  return true;
}

}  // namespace flowtrack
