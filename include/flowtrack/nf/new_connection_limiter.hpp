// How fast a load balancer's tracker takes new connections: a meter of the first packets that would open
// one, so that a flood of them (SYNs from spoofed sources, each the first and last packet of a
// "connection") cannot fill the tracker. While first packets come at most `rate` a second (with bursts
// of up to `burst` above it), each is admitted and its connection tracked; above that, none is, and the
// balancer forwards them by the consistent choice (Maglev) without state: a legitimate client's
// connection still reaches its backend, and gets its state from a later packet once the flood is over
// (a first packet without SYN takes the consistent choice too, stateful_lb.hpp).
//
// A token bucket whose tokens every first packet takes, admitted or not: the bucket holds `burst` tokens
// at most and gains `rate` a second; a packet is admitted when a token is left after its own. Refused
// packets still take theirs, down to `burst` below empty, so that a flood keeps the bucket empty for as
// long as it lasts (a bucket that only admitted ones drain would hand its refill to the flood, `rate`
// spoofed connections a second) and it fills again `burst / rate` seconds after the flood ends. What a
// flood can leave in the tracker is then the bucket at the flood's start (at most `burst` connections)
// plus whatever comes at the rate itself; a rate sustained just under the limit is admitted, and lives
// as long as its timeout (tcp_syn_sent): size the limit and the table together.
//
// Time is the packets' own (NfPacket::time), so tests run on any clock they choose. One meter per
// function instance: per worker when the workers do not share the function.
#pragma once

#include <algorithm>
#include <cstdint>

#include "flowtrack/util/time.hpp"

namespace flowtrack {

class NewConnectionLimiter {
 public:
  // `rate`: first packets a second, at most 10^9 (0: no limit); `burst`: how many above the rate the
  // bucket holds (at least 1 when there is a limit; rate and burst as the configuration bounds them, so
  // that the credit below stays far within 63 bits).
  NewConnectionLimiter(std::uint64_t rate = 0, std::uint64_t burst = 1)
      : cost_(rate == 0 ? 0 : static_cast<std::int64_t>(kNanosPerSecond / rate)),
        capacity_(cost_ * static_cast<std::int64_t>(std::max<std::uint64_t>(burst, 1))),
        credit_(capacity_) {}

  bool limits() const { return cost_ != 0; }

  // Takes the token of a first packet at `now` (non-decreasing); true when it may open a connection.
  bool admit(Nanos now) {
    if (cost_ == 0) return true;
    // The credit is time: a token is cost_ nanoseconds of it. It grows with time up to capacity_ (a gap
    // of 2 * capacity_ refills it from any level: the longer ones are cut to that, to stay in range).
    if (started_) credit_ = std::min(capacity_, credit_ + static_cast<std::int64_t>(std::min<Nanos>(now - last_, 2 * capacity_)));
    started_ = true;
    last_ = now;
    credit_ = std::max(credit_ - cost_, -capacity_);
    return credit_ >= 0;
  }

 private:
  std::int64_t cost_;      // nanoseconds of credit a first packet takes: 1 s / rate
  std::int64_t capacity_;  // the most credit held: burst tokens
  std::int64_t credit_;    // in -capacity_..capacity_
  Nanos last_ = 0;
  bool started_ = false;
};

}  // namespace flowtrack
