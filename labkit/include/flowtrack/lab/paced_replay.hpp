// Sources for runs that measure a table under load rather than replay a trace's timeline (`bench
// scale`, lab/scale_run.hpp):
//  - PassReplay: a worker's replay arena `passes` times over, as its NIC queue would deliver it (flows
//    recur; with aging on, idle ones expire in between and come back as new flows);
//  - Restamped: any source's packets stamped with the run's own clock (aging follows wall time, not the
//    trace's), each burst paced to a packet rate when asked.
#pragma once

#include <immintrin.h>

#include <span>

#include "flowtrack/util/time.hpp"
#include "flowtrack/runtime/replay_source.hpp"
#include "flowtrack/util/tsc.hpp"

namespace flowtrack {

// Spins until the worker may take its next burst at the target rate (0: as fast as it goes).
class Pacer {
 public:
  explicit Pacer(double pps) : cycles_per_packet_(pps > 0 ? tsc_hz() / pps : 0) {}
  void wait(std::size_t packets) {
    if (cycles_per_packet_ == 0) return;
    if (sent_ == 0) start_ = __rdtsc();
    const auto due = start_ + static_cast<std::uint64_t>(static_cast<double>(sent_) * cycles_per_packet_);
    while (__rdtsc() < due) _mm_pause();
    sent_ += packets;
  }

 private:
  double cycles_per_packet_;
  std::uint64_t start_ = 0;
  std::uint64_t sent_ = 0;
};

class PassReplay {
 public:
  PassReplay(ReplaySource& replay, unsigned passes) : replay_(replay), passes_(passes) {}

  LinkType link_type() const { return replay_.link_type(); }
  bool done() const { return pass_ + 1 >= passes_ && replay_.done(); }
  std::size_t next(std::span<NfPacket> burst) {
    std::size_t n = replay_.next(burst);
    if (n == 0 && pass_ + 1 < passes_) {
      ++pass_;
      replay_.rewind();
      n = replay_.next(burst);
    }
    return n;
  }

 private:
  ReplaySource& replay_;
  unsigned passes_;
  unsigned pass_ = 0;
};

template <class Source>
class Restamped {
 public:
  Restamped(Source& inner, const TscClock& clock, double pps_per_worker) : inner_(inner), clock_(clock), pacer_(pps_per_worker) {}

  LinkType link_type() const { return inner_.link_type(); }
  bool done() const { return inner_.done(); }
  std::size_t next(std::span<NfPacket> burst) {
    const std::size_t n = inner_.next(burst);
    if (n == 0) return 0;
    pacer_.wait(n);
    const Nanos now = clock_.now();
    for (NfPacket& p : burst.first(n)) p.time = now;
    return n;
  }

 private:
  Source& inner_;
  const TscClock& clock_;
  Pacer pacer_;
};

}  // namespace flowtrack
