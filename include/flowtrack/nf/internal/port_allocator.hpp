// The external ports of one (public address, protocol) that one core may hand out: the core's slice
// of the NAT's port range (so a reply's destination port names the core that owns its mapping, seed
// 003), with a quarantine after release (RFC 6888 REQ-8: a port is not reused for a while, so late
// packets of the old mapping cannot reach the new one).
//
// allocate() takes the preferred port when it is in the slice and free (port preservation), else a
// port drawn uniformly from the free ones (RFC 6056: ports do not leak which inside port or which
// order they came from); it returns 0 when every port is in use or in quarantine. Each port in use
// remembers its holder (whatever the caller names: the NAT, its mapping), so the caller finds the
// holder of an external port by indexing, with no map of its own. Every call is bounded by the
// slice's size, not by how full it is, exhaustion included: a NAT under a flood of new flows with no
// port left pays a constant per packet.
//
// A port is in exactly one of three places: in use (it has a holder); in the quarantine queue, waiting
// for its time; or in the free set. Released ports enter the queue in release order, and every port
// waits the same quarantine, so the queue is ordered by the time its ports become free again (given a
// clock that never goes back): allocate() moves the front ports whose time has come into the free set.
// The free set is a bitmap with a count of free ports per block of 4 096: a uniform draw picks the
// r-th free port by walking at most 16 block counts and 64 words. Everything a draw reads is 8 KiB a
// slice, so it stays in cache where a free list with positions (256 KiB a slice, written at random)
// did not; the holders (4 bytes a port) are the only per-port array an allocation writes.
#pragma once

#include <cstdint>
#include <vector>

#include "flowtrack/util/random.hpp"
#include "flowtrack/util/time.hpp"
#include "flowtrack/nf/internal/quarantine_queue.hpp"

namespace flowtrack {

class PortAllocator {
 public:
  static constexpr std::uint32_t kNoHolder = ~std::uint32_t{0};

  // Ports first..last (host order, first >= 1, first <= last).
  PortAllocator(std::uint16_t first, std::uint16_t last, Nanos quarantine, std::uint64_t seed);

  // A port for `holder` (anything but kNoHolder), or 0 when none is free.
  std::uint16_t allocate(std::uint16_t preferred, Nanos now, std::uint32_t holder);
  // Brings towards the cache what allocate(preferred) reads and writes at random: the preferred port's
  // word of the free set and its holder entry, and the quarantine queue's front. A hint; changes nothing.
  void prefetch(std::uint16_t preferred) const {
    if (owns(preferred)) {
      const std::size_t slot = preferred - first_;
      __builtin_prefetch(&free_words_[slot / 64]);
      __builtin_prefetch(&holders_[slot], 1);
    }
    quarantine_queue_.prefetch_front();
  }
  // Ends the use of a port handed out by allocate(); anything else is ignored.
  void release(std::uint16_t port, Nanos now);

  bool owns(std::uint16_t port) const { return port >= first_ && port <= last_; }
  bool in_use(std::uint16_t port) const { return holder_of(port) != kNoHolder; }
  // The holder of a port in use, else kNoHolder (also for a port outside the slice).
  std::uint32_t holder_of(std::uint16_t port) const { return owns(port) ? holders_[port - first_] : kNoHolder; }
  void prefetch_holder(std::uint16_t port) const {
    if (owns(port)) __builtin_prefetch(&holders_[port - first_]);
  }
  std::size_t in_use_count() const { return in_use_; }
  std::size_t size() const { return holders_.size(); }

  // A saved state put back into a fresh allocator (nf/nat_snapshot.hpp): `port` to `holder`, or into
  // the quarantine until `free_at` (in the saved order: free_at never decreasing). False, with nothing
  // changed, for a port outside the slice or not free, or a time before the last one restored.
  bool restore_in_use(std::uint16_t port, std::uint32_t holder);
  bool restore_quarantined(std::uint16_t port, Nanos free_at);
  // Visits the ports in quarantine, the next one free first: visit(port, free_at).
  template <class Visit>
  void for_each_quarantined(Visit&& visit) const {
    quarantine_queue_.for_each([&](const auto& entry) { visit(static_cast<std::uint16_t>(first_ + entry.item), entry.free_at); });
  }

 private:
  using Slot = std::uint16_t;  // port - first: a slice holds at most 65535 ports
  static constexpr std::size_t kWordsPerBlock = 64;

  bool is_free(Slot slot) const { return (free_words_[slot / 64] >> (slot % 64)) & 1u; }
  void add_free(Slot slot);
  void take_free(Slot slot);
  // The free slot of rank `r` (0-based, r < free_count_) in slot order.
  Slot nth_free(std::size_t r) const;
  void end_quarantines(Nanos now);

  std::uint16_t first_, last_;
  Nanos quarantine_;
  std::vector<std::uint64_t> free_words_;    // bit s % 64 of word s / 64: slot s is free
  std::vector<std::uint16_t> free_in_block_;  // free slots in each block of kWordsPerBlock words
  std::size_t free_count_ = 0;
  std::vector<std::uint32_t> holders_;        // by slot: the holder while in use, else kNoHolder
  QuarantineQueue<Slot> quarantine_queue_;    // room for every slot: a slot waits there at most once
  std::size_t in_use_ = 0;
  Random rng_;
};

}  // namespace flowtrack
