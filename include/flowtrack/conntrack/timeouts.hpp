// How long an idle connection is kept, by protocol and state. The defaults are Linux conntrack's
// (net.netfilter.nf_conntrack_*_timeout*), which the RFC 4787/5382/5508 minimums for NATs are met or
// exceeded by: UDP 30 s until a reply is seen, 120 s after; TCP by state (5 days once established);
// ICMP queries 30 s; anything else 600 s.
#pragma once

#include <array>

#include "flowtrack/conntrack/tcp_state.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

struct ConntrackTimeouts {
  // Indexed by TcpState; `none` is the timeout of a connection created by a packet that set no state.
  std::array<Nanos, kTcpStateCount> tcp = {
      120 * kNanosPerSecond,        // none
      120 * kNanosPerSecond,        // syn_sent
      60 * kNanosPerSecond,         // syn_recv
      432'000 * kNanosPerSecond,    // established: 5 days
      120 * kNanosPerSecond,        // fin_wait
      60 * kNanosPerSecond,         // close_wait
      30 * kNanosPerSecond,         // last_ack
      120 * kNanosPerSecond,        // time_wait
      10 * kNanosPerSecond,         // close
  };
  Nanos udp_unreplied = 30 * kNanosPerSecond;
  Nanos udp_replied = 120 * kNanosPerSecond;
  Nanos icmp = 30 * kNanosPerSecond;
  Nanos other = 600 * kNanosPerSecond;

  Nanos tcp_timeout(TcpState state) const { return tcp[static_cast<std::size_t>(state)]; }
};

}  // namespace flowtrack
