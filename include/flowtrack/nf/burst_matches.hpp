// One burst's connection lookups, for a function that tracks connections (conn_tracker.hpp): the
// packets it names are looked up together (one find_bulk per kMaxBulk keys, so that their cache misses
// overlap), and the records of the connections found are prefetched before the per-packet work reads
// them.
//
// The per-packet work then asks for each packet's match in order. A match from the bulk lookup is
// still right unless the tracker changed since: a miss may have become a hit when an earlier packet of
// the burst created its connection (a SYN and its retransmission in one burst make one connection), and
// a hit a miss when a connection was removed. Only then is the packet looked up again, on its own, so
// that the burst sees exactly what one packet at a time would.
#pragma once

#include <array>
#include <bitset>
#include <span>

#include "flowtrack/conntrack/conn_tracker.hpp"
#include "flowtrack/nf/network_function.hpp"

namespace flowtrack {

template <class Tracker>
class BurstMatches {
 public:
  // Looks up burst[i].parsed.key4 (hash burst[i].hash) for every i with wanted(i).
  template <class Wanted>
  void lookup(const Tracker& tracker, std::span<const NfPacket> burst, Wanted&& wanted) {
    FLOWTRACK_ASSERT(burst.size() <= kMaxBurst, "a burst holds at most kMaxBurst packets");
    std::size_t n = 0;
    looked_up_.reset();
    const auto found = [&](std::size_t k, ConnMatch match) {
      matches_[index_[k]] = match;
      if (match) tracker.prefetch(match.conn);
    };
    const auto flush = [&] {
      if (n == 1) {
        found(0, tracker.find(keys_[0], hashes_[0]));  // a burst of one is the per-packet path: a plain lookup
      } else {
        tracker.find_bulk(std::span(keys_).first(n), std::span(hashes_).first(n), found);
      }
      n = 0;
    };
    for (std::size_t i = 0; i < burst.size(); ++i) {
      if (!wanted(i)) continue;
      looked_up_[i] = true;
      keys_[n] = burst[i].parsed.key4;
      hashes_[n] = burst[i].hash;
      index_[n] = static_cast<std::uint8_t>(i);
      if (++n == kMaxBulk) flush();
    }
    if (n != 0) flush();
    creations_ = tracker.creations();
    removals_ = tracker.removals();
  }

  // The match of burst[i] (one that lookup() looked up), as a lookup now would find it.
  ConnMatch match(const Tracker& tracker, std::size_t i, const NfPacket& packet) const {
    FLOWTRACK_ASSERT(looked_up_[i], "match() of a packet lookup() did not look up");
    const ConnMatch& m = matches_[i];
    const bool stale = m ? tracker.removals() != removals_ : tracker.creations() != creations_;
    return stale ? tracker.find(packet.parsed.key4, packet.hash) : m;
  }

  bool looked_up(std::size_t i) const { return looked_up_[i]; }

  // What the bulk lookup found for burst[i], which a later packet of the burst may have made stale:
  // for prefetching what the per-packet work will read, never for deciding.
  ConnMatch prefetch_hint(std::size_t i) const { return looked_up_[i] ? matches_[i] : ConnMatch{}; }

 private:
  // The bulk lookup's gathered keys and results: members, not locals, so that no call pays for
  // initialising arrays of keys it mostly does not use.
  std::array<FlowKeyV4, kMaxBulk> keys_;
  std::array<std::uint32_t, kMaxBulk> hashes_;
  std::array<std::uint8_t, kMaxBulk> index_;  // of each key's packet in the burst
  std::array<ConnMatch, kMaxBurst> matches_;
  std::bitset<kMaxBurst> looked_up_;  // indexed with [], not test(): i < kMaxBurst, no range check wanted
  std::uint64_t creations_ = 0, removals_ = 0;
};

}  // namespace flowtrack
