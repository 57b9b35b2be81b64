// "fwd": parse and forward, nothing else: the baseline every network function is measured against.
#pragma once

#include <span>

#include "flowtrack/nf/network_function.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

class Forwarder {
 public:
  template <BurstOutput Out>
  void process_burst(std::span<NfPacket> burst, Out& out) {
    for (const NfPacket& packet : burst) out.verdict(packet, counters_.pass());
    out.stage_done(NfStage::rewrite);
  }
  std::size_t expire(Nanos, std::size_t = kDefaultExpireBudget) { return 0; }
  const NfCounters& counters() const { return counters_; }

 private:
  NfCounters counters_;
};

}  // namespace flowtrack
