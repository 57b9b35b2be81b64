// "fwd": parse and forward, nothing else: the baseline every network function is measured against.
#pragma once

#include "flowtrack/aging/clock.hpp"
#include "flowtrack/nf/nf_packet.hpp"

namespace flowtrack {

class Forwarder {
 public:
  Verdict process(NfPacket&, Nanos) {
    ++counters_.forwarded;
    ++counters_.passed;
    return Verdict::forward;
  }
  std::size_t expire(Nanos, std::size_t = 0) { return 0; }
  const NfCounters& counters() const { return counters_; }

 private:
  NfCounters counters_;
};

}  // namespace flowtrack
