// "fwd": parse and forward, nothing else: the baseline every network function is measured against.
#pragma once

#include "flowtrack/aging/clock.hpp"
#include "flowtrack/nf/network_function.hpp"

namespace flowtrack {

class Forwarder {
 public:
  Verdict process(NfPacket&, Nanos) { return counters_.pass(); }
  std::size_t expire(Nanos, std::size_t = kDefaultExpireBudget) { return 0; }
  const NfCounters& counters() const { return counters_; }

 private:
  NfCounters counters_;
};

}  // namespace flowtrack
