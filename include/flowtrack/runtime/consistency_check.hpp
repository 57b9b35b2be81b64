// The load balancers' consistency check (nf/lb_consistency.hpp) as an output that wraps another
// (`flowtrack run --check`): it sees every packet the function forwards, in and out, then hands the
// verdict on. Off by default, so run's Mpps never include it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/nf/lb_consistency.hpp"
#include "flowtrack/runtime/burst_loop.hpp"

namespace flowtrack {

template <PacketOutput Out>
class ConsistencyCheck {
 public:
  ConsistencyCheck(Out& inner, const std::vector<Service>& services, LinkType link, Nanos handshake_timeout)
      : inner_(inner), ledger_(services, link, handshake_timeout) {}

  void verdict(const NfPacket& packet, Verdict verdict) {
    if (verdict == Verdict::forward) ledger_.forwarded(packet.parsed, packet.frame, packet.time);
    inner_.verdict(packet, verdict);
  }
  void held(std::span<const std::uint8_t> frame, std::uint32_t wire_length) { inner_.held(frame, wire_length); }

  const ConsistencyCounts& counts() const { return ledger_.counts(); }

 private:
  Out& inner_;
  ConsistencyLedger ledger_;
};

}  // namespace flowtrack
