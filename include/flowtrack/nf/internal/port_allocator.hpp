// The external ports of one (public address, protocol) that one core may hand out: the core's slice
// of the NAT's port range (so a reply's destination port names the core that owns its mapping, seed
// 003), with a quarantine after release (RFC 6888 REQ-8: a port is not reused for a while, so late
// packets of the old mapping cannot reach the new one).
//
// allocate() takes the preferred port when it is in the slice and free (port preservation), else the
// first free one of a sequence of candidates drawn from a keyed hash of the caller's endpoint, each
// uniform over the slice, so that the port taken is uniform over the free ones (RFC 6056's hash-based
// selection: ports do not leak which inside port or which order they came from); after kProbes
// candidates all taken (a slice nearly full), the first free port after the last candidate. It
// returns 0 when every port is in use or in quarantine. The port an endpoint gets depends on which of
// its candidates are taken, not on what was allocated before it: two instances that see the same
// mappings created in a different order (workers fed by interleaved queues, the rehearsal of a live
// run) give each endpoint the same port unless its candidates' occupancy differs, where a shared
// random stream would set every later draw apart from the first difference on. Every call is bounded
// by the slice's size, not by how full it is, exhaustion included: a NAT under a flood of new flows
// with no port left pays a constant per packet.
//
// A port is in exactly one of three places: in use (it has a holder); in the quarantine queue, waiting
// for its time; or in the free set. Released ports enter the queue in release order, and every port
// waits the same quarantine, so the queue is ordered by the time its ports become free again (given a
// clock that never goes back): allocate() moves the front ports whose time has come into the free set.
// The free set is a bitmap with a count of free ports per block of 4 096: a candidate is one bit to
// test; the search after the last one walks at most the rest of its block's 64 words, 16 block counts
// and one block's 64 words. Everything a draw reads is 8 KiB a slice, so it stays in cache where a
// free list with positions (256 KiB a slice, written at random) did not; the holders (4 bytes a port)
// are the only per-port array an allocation writes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "flowtrack/util/time.hpp"
#include "flowtrack/nf/internal/quarantine_queue.hpp"

namespace flowtrack {

class PortAllocator {
 public:
  static constexpr std::uint32_t kNoHolder = ~std::uint32_t{0};
  // Candidates tried before the search: with a quarter of the slice free, all 64 are taken once in
  // 10^8 allocations.
  static constexpr unsigned kProbes = 64;

  // Ports first..last (host order, first >= 1, first <= last); `seed` keys the starts' hash.
  PortAllocator(std::uint16_t first, std::uint16_t last, Nanos quarantine, std::uint64_t seed);

  // A port for `holder` (anything but kNoHolder), or 0 when none is free. `endpoint` names who asks
  // (the NAT: the inside address, protocol and port): when `preferred` is not to be had, the candidates
  // come from the keyed hash of `endpoint`.
  std::uint16_t allocate(std::uint16_t preferred, Nanos now, std::uint32_t holder, std::uint64_t endpoint);
  // The port allocate(preferred, ..., endpoint) takes while that port is free: `preferred` when the
  // slice has it, else `endpoint`'s first candidate. A load that gives no two endpoints the same first
  // choice gets the same ports in whatever order its mappings are made (trace ports).
  std::uint16_t first_choice(std::uint16_t preferred, std::uint64_t endpoint) const {
    return owns(preferred) ? preferred : static_cast<std::uint16_t>(first_ + candidate(mix(endpoint ^ key_), 0));
  }
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
  static std::uint64_t mix(std::uint64_t x);
  // Candidate k (uniform over the slice) of an endpoint whose keyed hash is `hash`.
  Slot candidate(std::uint64_t hash, unsigned k) const;
  void add_free(Slot slot);
  void take_free(Slot slot);
  // The first free one of `endpoint`'s candidates, else the first free slot after the last; free_count_ > 0.
  Slot drawn_for(std::uint64_t endpoint) const;
  // The first free slot at or after `start` (< size()), cyclically; free_count_ > 0.
  Slot first_free_from(Slot start) const;
  // The first free slot in words [from, to) of free_words_, if any.
  std::optional<Slot> first_free_in_words(std::size_t from, std::size_t to) const;
  void end_quarantines(Nanos now);

  std::uint16_t first_, last_;
  Nanos quarantine_;
  std::vector<std::uint64_t> free_words_;    // bit s % 64 of word s / 64: slot s is free
  std::vector<std::uint16_t> free_in_block_;  // free slots in each block of kWordsPerBlock words
  std::size_t free_count_ = 0;
  std::vector<std::uint32_t> holders_;        // by slot: the holder while in use, else kNoHolder
  QuarantineQueue<Slot> quarantine_queue_;    // room for every slot: a slot waits there at most once
  std::size_t in_use_ = 0;
  std::uint64_t key_;  // the starts' hash key, from the seed
};

}  // namespace flowtrack
