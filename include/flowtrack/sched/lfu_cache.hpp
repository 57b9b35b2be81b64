// A cache of flow tags with a hit count each and least-frequently-used replacement, organised in sets:
// both levels of the aggressive flow detector are one of these. The aggressive flow cache is a single
// set (fully associative, as the paper builds it); the annex is many sets of eight ways, its set chosen
// by a hash of the tag (the paper gives the annex no associativity; a 512- to 2048-entry fully
// associative LFU is no hardware design, and searching one costs an index and a priority queue).
//
// Order within a set: the victim is the way with the least count and, among equal counts, the one that
// has held its count the longest (oldest first), so a new entry (count 1) is not the next victim while
// older count-1 entries remain. Both live in one 64-bit key per way, count << 40 | stamp, where the stamp
// is the cache's change counter: the victim is the way with the least key, an empty way (key 0) first.
// Counts saturate at 2^23 - 1 (8.4 M hits of one flow in one cache; beyond it such flows keep their
// order by stamp) and stamps have 40 bits (1.1 x 10^12 changes: 30 hours at 10 M packets a second), so
// a key stays a positive signed integer.
//
// A set is a whole number of groups of eight ways (padded with ways that never match and are never a
// victim). A lookup compares a group's eight tags at once; each set remembers its victim, found again by
// a minimum over the set's keys only when it may have changed (the victim was hit or replaced: keys only
// grow, so a hit elsewhere leaves it the least). AVX2 vector compares where the target has them, plain
// loops elsewhere. Nothing is allocated after construction.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace flowtrack {

class LfuCache {
 public:
  struct Entry {
    std::uint64_t tag;
    std::uint64_t count;
  };
  // The ways of one set of a large cache; a cache of at most this many entries is one set.
  static constexpr std::size_t kAnnexWays = 8;
  // The tag no flow has: an empty way.
  static constexpr std::uint64_t kNoTag = ~std::uint64_t{0};

  // `entries` ways in all: one set when entries <= kAnnexWays or `fully_associative`, else entries /
  // kAnnexWays sets of kAnnexWays ways. Throws std::invalid_argument for a set-associative size that is
  // not a multiple of kAnnexWays.
  explicit LfuCache(std::size_t entries, bool fully_associative = false);

  std::size_t capacity() const { return capacity_; }
  bool contains(std::uint64_t tag) const { return find(set_of(tag) * stride_, tag) >= 0; }

  // Counts one hit on `tag` if it is resident; returns its new count, or 0 when it is not resident.
  std::uint64_t hit(std::uint64_t tag);
  // The least count held in `tag`'s set (0 while the set has an empty way, so anything may enter).
  std::uint64_t least_count(std::uint64_t tag) const {
    return capacity_ == 0 ? 0 : keys_[victims_[set_of(tag)]] >> kStampBits;
  }
  // Puts `tag` (not resident) in its set with `count` (>= 1); when the set is full, first evicts its LFU
  // victim and returns it. Precondition: capacity() > 0.
  std::optional<Entry> insert(std::uint64_t tag, std::uint64_t count);
  // Takes `tag` out and returns its count (0 when it was not resident).
  std::uint64_t remove(std::uint64_t tag);

  std::vector<Entry> entries() const;

 private:
  static constexpr unsigned kStampBits = 40;
  static constexpr std::uint64_t kStampMask = (std::uint64_t{1} << kStampBits) - 1;
  static constexpr std::uint64_t kMaxCount = (std::uint64_t{1} << (63 - kStampBits)) - 1;
  // A padding way (a set rounded up to whole groups of eight): never matches, never a victim.
  static constexpr std::uint64_t kDisabled = INT64_MAX;

  // The set that holds `tag`.
  std::size_t set_of(std::uint64_t tag) const {
    if (sets_ == 1) return 0;
    // Fibonacci hashing spreads dense flow indexes; multiply-high maps onto any number of sets.
    const std::uint64_t mixed = tag * 0x9e3779b97f4a7c15ull;
    return static_cast<std::size_t>((static_cast<unsigned __int128>(mixed) * sets_) >> 64);
  }
  // The way holding `tag` in the set starting at `first`, or -1.
  std::ptrdiff_t find(std::size_t first, std::uint64_t tag) const;
  // The way of the set starting at `first` with the least key.
  std::size_t victim(std::size_t first) const;
  std::uint64_t bump(std::size_t way) {
    const std::uint64_t count = std::min((keys_[way] >> kStampBits) + 1, kMaxCount);
    keys_[way] = (count << kStampBits) | (next_stamp_++ & kStampMask);
    return count;
  }
  void fill(std::size_t way, std::uint64_t tag, std::uint64_t count) {
    tags_[way] = tag;
    keys_[way] = (std::min(count, kMaxCount) << kStampBits) | (next_stamp_++ & kStampMask);
  }

  std::size_t capacity_;
  std::size_t sets_;
  std::size_t ways_;    // per set, as configured
  std::size_t stride_;  // per set, padded to a multiple of 8
  std::vector<std::uint64_t> tags_;  // set s at [s * stride_, s * stride_ + stride_)
  std::vector<std::uint64_t> keys_;  // count << 40 | stamp (< 2^63); 0 when empty, kDisabled for padding
  std::vector<std::size_t> victims_;  // per set: its way with the least key
  std::uint64_t next_stamp_ = 1;
};

}  // namespace flowtrack
