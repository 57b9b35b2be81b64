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
    std::array<FlowKeyV4, kMaxBulk> keys;
    std::array<std::uint32_t, kMaxBulk> hashes;
    std::array<std::uint8_t, kMaxBulk> index;  // of each key's packet in the burst
    std::size_t n = 0;
    looked_up_.reset();
    const auto flush = [&] {
      std::array<ConnMatch, kMaxBulk> found;
      if (n == 1) {
        found[0] = tracker.find(keys[0], hashes[0]);  // a burst of one is the per-packet path: a plain lookup
      } else {
        tracker.find_bulk(std::span(keys).first(n), std::span(hashes).first(n), std::span(found).first(n));
      }
      for (std::size_t k = 0; k < n; ++k) {
        matches_[index[k]] = found[k];
        if (found[k]) tracker.prefetch(found[k].conn);
      }
      n = 0;
    };
    for (std::size_t i = 0; i < burst.size(); ++i) {
      if (!wanted(i)) continue;
      looked_up_.set(i);
      keys[n] = burst[i].parsed.key4;
      hashes[n] = burst[i].hash;
      index[n] = static_cast<std::uint8_t>(i);
      if (++n == kMaxBulk) flush();
    }
    if (n != 0) flush();
    creations_ = tracker.creations();
    removals_ = tracker.removals();
  }

  // The match of burst[i] (one that lookup() looked up), as a lookup now would find it.
  ConnMatch match(const Tracker& tracker, std::size_t i, const NfPacket& packet) const {
    FLOWTRACK_ASSERT(looked_up_.test(i), "match() of a packet lookup() did not look up");
    const ConnMatch& m = matches_[i];
    const bool stale = m ? tracker.removals() != removals_ : tracker.creations() != creations_;
    return stale ? tracker.find(packet.parsed.key4, packet.hash) : m;
  }

  bool looked_up(std::size_t i) const { return looked_up_.test(i); }

 private:
  std::array<ConnMatch, kMaxBurst> matches_;
  std::bitset<kMaxBurst> looked_up_;
  std::uint64_t creations_ = 0, removals_ = 0;
};

}  // namespace flowtrack
