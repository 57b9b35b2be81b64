// The event sink of a NAT of a pair (nat_events.hpp): each event into a single-producer single-consumer
// ring that the sync link's thread empties (each event made a record by sync_record_of,
// nat_sync_records.hpp), a few stores on the worker. A
// full ring loses the event and counts it; the link, seeing the count grow, sends its standby the whole
// state again, so a loss costs a resynchronisation, never a standby that quietly differs.
#pragma once

#include <cstdint>
#include <span>

#include "flowtrack/nf/nat_events.hpp"
#include "flowtrack/sync/spsc_ring.hpp"
#include "flowtrack/util/relaxed_atomic.hpp"

namespace flowtrack {

class NatEventRing {
 public:
  static constexpr bool kEnabled = true;

  // Producer (the worker). Without a ring attached every event is lost and counted.
  void emit(const NatEvent& event) {
    if (ring_ != nullptr && ring_->push(std::span(&event, 1)) == 1) {
      ++pushed_;
    } else {
      store_relaxed(lost_, lost_ + 1);
    }
  }
  // Before the worker starts: where the events go.
  void attach(SpscRingOf<NatEvent>* ring) { ring_ = ring; }
  // Any thread: events lost so far.
  std::uint64_t lost() const { return load_relaxed(lost_); }
  // The worker's thread only: events put in the ring so far. Taken with a snapshot of the NAT's state,
  // it says which of the ring's events the snapshot already holds (the first pushed() of them).
  std::uint64_t pushed() const { return pushed_; }

 private:
  SpscRingOf<NatEvent>* ring_ = nullptr;
  std::uint64_t lost_ = 0;  // written by the worker only
  std::uint64_t pushed_ = 0;  // the worker's only
};

}  // namespace flowtrack
