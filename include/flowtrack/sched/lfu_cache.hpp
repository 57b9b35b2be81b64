// A fully associative cache of flow tags with a hit count each and least-frequently-used replacement:
// both levels of the aggressive flow detector (the 16-entry cache and its annex) are one of these.
//
// Entries sit in fixed slots; a binary min-heap over the slots orders them by (count, stamp), where the
// stamp is a sequence number taken each time an entry's count changes. The root is therefore the LFU
// victim, and among equal counts the entry that has held its count the longest (oldest first): a new
// entry (count 1) is not the next victim while older count-1 entries remain, so in a large annex a flow
// has time to hit again before it is replaced. A hit costs one index lookup and one sift down.
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
  std::size_t size() const { return heap_.size(); }
  bool full() const { return heap_.size() == capacity_; }
  bool contains(std::uint64_t tag) const { return index_.find(tag) != nullptr; }

  // Counts one hit on `tag` if it is resident; returns its new count, or 0 when it is not resident.
  std::uint64_t hit(std::uint64_t tag);
  // The least count held (0 while the cache is not full, so anything may enter then).
  std::uint64_t least_count() const { return full() && capacity_ > 0 ? slots_[heap_[0]].count : 0; }
  // Puts `tag` (not resident) in with `count`; when full, first evicts the LFU victim and returns it.
  // Precondition: capacity() > 0.
  std::optional<Entry> insert(std::uint64_t tag, std::uint64_t count);
  // Takes `tag` out and returns its count (0 when it was not resident).
  std::uint64_t remove(std::uint64_t tag);

  std::vector<Entry> entries() const;

 private:
  struct Slot {
    std::uint64_t tag = 0;
    std::uint64_t count = 0;
    std::uint64_t stamp = 0;
    std::uint32_t heap_position = 0;
  };

  bool before(std::uint32_t a, std::uint32_t b) const {
    return slots_[a].count != slots_[b].count ? slots_[a].count < slots_[b].count : slots_[a].stamp < slots_[b].stamp;
  }
  void place(std::size_t position, std::uint32_t slot);
  void sift_down(std::size_t position);
  void sift_up(std::size_t position);

  std::size_t capacity_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> heap_;        // slot numbers, heap-ordered by before()
  std::vector<std::uint32_t> free_slots_;  // slots not in the heap
  TagIndex index_;                         // tag -> slot
  std::uint64_t next_stamp_ = 0;
};

}  // namespace flowtrack
