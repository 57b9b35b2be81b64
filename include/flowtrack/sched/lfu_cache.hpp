// A fully associative cache of flow tags with a hit count each and least-frequently-used replacement:
// both levels of the aggressive flow detector (the 16-entry cache and its annex) are one of these.
//
// Order: the victim is the entry with the least count and, among equal counts, the one that has held its
// count the longest (oldest first), so a new entry (count 1) is not the next victim while older count-1
// entries remain, and in a large annex a flow has time to hit again before it is replaced. Each change
// of count takes a fresh stamp; the order is (count, stamp).
//
// Two tiers keep the common case cheap. Entries of count 1 only ever got there by insertion, so their
// stamp order is their insertion order: they sit in a FIFO list (an insert appends, the victim is the
// head, a hit unlinks). Entries of count 2 and more sit in a binary min-heap by (count, stamp). The victim
// is the FIFO's head when there is one (count 1 is the least possible), else the heap's root. A miss
// that replaces a count-1 victim costs two index updates and no sift.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "flowtrack/sched/tag_index.hpp"

namespace flowtrack {

class LfuCache {
 public:
  struct Entry {
    std::uint64_t tag;
    std::uint64_t count;
  };

  explicit LfuCache(std::size_t capacity);

  std::size_t capacity() const { return capacity_; }
  std::size_t size() const { return size_; }
  bool full() const { return size_ == capacity_; }
  bool contains(std::uint64_t tag) const { return index_.find(tag) != nullptr; }

  // Counts one hit on `tag` if it is resident; returns its new count, or 0 when it is not resident.
  std::uint64_t hit(std::uint64_t tag);
  // The least count held (0 while the cache is not full, so anything may enter then).
  std::uint64_t least_count() const {
    if (!full() || capacity_ == 0) return 0;
    return fifo_head_ != kNone ? 1 : slots_[heap_[0]].count;
  }
  // Puts `tag` (not resident) in with `count` (>= 1); when full, first evicts the LFU victim and returns
  // it. Precondition: capacity() > 0.
  std::optional<Entry> insert(std::uint64_t tag, std::uint64_t count);
  // Takes `tag` out and returns its count (0 when it was not resident).
  std::uint64_t remove(std::uint64_t tag);

  std::vector<Entry> entries() const;

 private:
  static constexpr std::uint32_t kNone = UINT32_MAX;

  struct Slot {
    std::uint64_t tag = 0;
    std::uint64_t count = 0;
    std::uint64_t stamp = 0;
    // count 1: neighbours in the FIFO list; count >= 2: `previous` is the position in the heap.
    std::uint32_t previous = kNone;
    std::uint32_t next = kNone;
  };

  bool before(std::uint32_t a, std::uint32_t b) const {
    return slots_[a].count != slots_[b].count ? slots_[a].count < slots_[b].count : slots_[a].stamp < slots_[b].stamp;
  }
  void place(std::size_t position, std::uint32_t slot);
  void sift_down(std::size_t position);
  void sift_up(std::size_t position);
  void fifo_append(std::uint32_t slot);
  void fifo_unlink(std::uint32_t slot);
  void heap_push(std::uint32_t slot);
  void heap_erase(std::uint32_t slot);
  // Takes the entry of `slot` out of the index and of its tier (the slot's contents stay).
  void unfile(std::uint32_t slot);
  // Fills `slot` with a new entry and files it in its tier.
  void fill(std::uint32_t slot, std::uint64_t tag, std::uint64_t count);

  std::size_t capacity_;
  std::size_t size_ = 0;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> heap_;        // slots of count >= 2, heap-ordered by before()
  std::uint32_t fifo_head_ = kNone;        // oldest count-1 slot
  std::uint32_t fifo_tail_ = kNone;
  std::vector<std::uint32_t> free_slots_;  // slots holding no entry
  TagIndex index_;                         // tag -> slot
  std::uint64_t next_stamp_ = 0;
};

}  // namespace flowtrack
