// The external ports of one (public address, protocol) that one core may hand out: the core's slice
// of the NAT's port range (so a reply's destination port names the core that owns its mapping, seed
// 003), with a quarantine after release (RFC 6888 REQ-8: a port is not reused for a while, so late
// packets of the old mapping cannot reach the new one).
//
// allocate() takes the preferred port when it is in the slice and free (port preservation), else a
// port drawn uniformly from the free ones (RFC 6056: ports do not leak which inside port or which
// order they came from); it returns 0 when every port is in use or in quarantine. Every call is O(1)
// however full the slice is, exhaustion included: a NAT under a flood of new flows with no port left
// pays a constant per packet, not a scan of the slice.
//
// A port is in exactly one of three places: in use; in the quarantine queue, waiting for its time;
// or in the free set. Released ports enter the queue in release order, and every port waits the same
// quarantine, so the queue is ordered by the time its ports become free again (given a clock that
// never goes back): allocate() moves the front ports whose time has come into the free set. The free
// set is an array with each port's position beside it, so a given port (the preferred one) or a random
// one leaves it in O(1) by swapping with the last.
#pragma once

#include <cstdint>
#include <vector>

#include "flowtrack/aging/clock.hpp"
#include "flowtrack/io/random.hpp"

namespace flowtrack {

class PortAllocator {
 public:
  // Ports first..last (host order, first >= 1, first <= last).
  PortAllocator(std::uint16_t first, std::uint16_t last, Nanos quarantine, std::uint64_t seed);

  std::uint16_t allocate(std::uint16_t preferred, Nanos now);
  // Brings towards the cache what allocate(preferred) reads and writes first: the preferred port's
  // place in the free set, the free set's last entry (which a taken port swaps with) and the
  // quarantine queue's front. A hint; changes nothing.
  void prefetch(std::uint16_t preferred) const {
    if (owns(preferred)) __builtin_prefetch(&position_[preferred - first_]);
    if (!free_.empty()) __builtin_prefetch(&free_.back(), 1);
    __builtin_prefetch(&queue_[queue_head_]);
  }
  // Ends the use of a port handed out by allocate(); anything else is ignored.
  void release(std::uint16_t port, Nanos now);

  bool owns(std::uint16_t port) const { return port >= first_ && port <= last_; }
  bool in_use(std::uint16_t port) const { return owns(port) && in_use_flag_[port - first_]; }
  std::size_t in_use_count() const { return in_use_; }
  std::size_t size() const { return in_use_flag_.size(); }

 private:
  using Slot = std::uint16_t;  // port - first: a slice holds at most 65535 ports
  static constexpr Slot kNotFree = 0xffff;

  struct Quarantined {
    Nanos free_at;
    Slot slot;
  };

  void add_free(Slot slot);
  void take_free(Slot slot);
  void end_quarantines(Nanos now);

  std::uint16_t first_, last_;
  Nanos quarantine_;
  std::vector<bool> in_use_flag_;          // by slot
  std::vector<Slot> free_;                 // the free set, in no order
  std::vector<Slot> position_;             // by slot: index in free_, or kNotFree
  std::vector<Quarantined> queue_;         // ring buffer of `size()` entries: ordered by free_at
  std::size_t queue_head_ = 0, queue_length_ = 0;
  std::size_t in_use_ = 0;
  Random rng_;
};

}  // namespace flowtrack
