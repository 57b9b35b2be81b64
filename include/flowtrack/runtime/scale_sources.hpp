// Where `bench scale`'s workers take their bursts from (runtime/runner.hpp), both stamping each burst with
// the run's own clock (aging follows wall time there, not the trace's) and pacing it to a packet rate
// when asked:
//  - PassReplay (hardware steering): the worker's own replay arena (replay_source.hpp), `passes` times
//    over, as its NIC queue would deliver it;
//  - RingReplay (software steering): packet indices a dispatcher thread hands over an SPSC ring, the
//    frames read where the trace holds them.
#pragma once

#include <immintrin.h>

#include <array>
#include <atomic>
#include <span>

#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/runtime/replay_source.hpp"
#include "flowtrack/sync/spsc_ring.hpp"
#include "flowtrack/util/time.hpp"
#include "flowtrack/util/tsc.hpp"

namespace flowtrack {

// Spins until the worker may take its next burst at the target rate (0: as fast as it goes).
class Pacer {
 public:
  Pacer(double pps, std::uint64_t start) : cycles_per_packet_(pps > 0 ? tsc_hz() / pps : 0), start_(start) {}
  void wait(std::size_t packets) {
    if (cycles_per_packet_ == 0) return;
    const auto due = start_ + static_cast<std::uint64_t>(static_cast<double>(sent_) * cycles_per_packet_);
    while (__rdtsc() < due) _mm_pause();
    sent_ += packets;
  }

 private:
  double cycles_per_packet_;
  std::uint64_t start_;
  std::uint64_t sent_ = 0;
};

inline void stamp(std::span<NfPacket> burst, Nanos now) {
  for (NfPacket& p : burst) p.time = now;
}

class PassReplay {
 public:
  PassReplay(ReplaySource& replay, unsigned passes, const TscClock& clock, Pacer& pacer)
      : replay_(replay), passes_(passes), clock_(clock), pacer_(pacer) {}

  LinkType link_type() const { return replay_.link_type(); }
  std::size_t next(std::span<NfPacket> burst) {
    std::size_t n = replay_.next(burst);
    if (n == 0 && ++pass_ < passes_) {
      replay_.rewind();
      n = replay_.next(burst);
    }
    if (n == 0) return 0;
    pacer_.wait(n);
    stamp(burst.first(n), clock_.now());
    return n;
  }

 private:
  ReplaySource& replay_;
  unsigned passes_;
  unsigned pass_ = 0;
  const TscClock& clock_;
  Pacer& pacer_;
};

class RingReplay {
 public:
  // `done` turns true once the dispatcher has pushed its last index; idle polls of an empty ring are
  // counted in `idle_polls`.
  RingReplay(SpscRing& ring, PacketStore& store, const std::atomic<bool>& done, const TscClock& clock, Pacer& pacer,
             std::uint64_t& idle_polls)
      : ring_(ring), store_(store), done_(done), clock_(clock), pacer_(pacer), idle_polls_(idle_polls) {}

  LinkType link_type() const { return store_.link_type(); }
  std::size_t next(std::span<NfPacket> burst) {
    std::array<std::uint32_t, kMaxBurst> indices;
    std::size_t n = 0;
    for (;;) {
      const bool finished = done_.load(std::memory_order_acquire);  // read before the pop
      n = ring_.pop(std::span(indices).first(burst.size()));
      if (n != 0) break;
      if (finished) return 0;
      ++idle_polls_;
      _mm_pause();
    }
    pacer_.wait(n);
    for (std::size_t i = 0; i < n; ++i) {
      NfPacket& p = burst[i];
      p.frame = store_.mutable_bytes(indices[i]);
      p.capacity = p.frame.size();
      p.wire_length = store_[indices[i]].wire_length;
      p.slot = indices[i];
    }
    stamp(burst.first(n), clock_.now());
    return n;
  }

 private:
  SpscRing& ring_;
  PacketStore& store_;
  const std::atomic<bool>& done_;
  const TscClock& clock_;
  Pacer& pacer_;
  std::uint64_t& idle_polls_;
};

}  // namespace flowtrack
