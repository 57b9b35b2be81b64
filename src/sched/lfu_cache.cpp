#include "flowtrack/sched/lfu_cache.hpp"

#include <stdexcept>

namespace flowtrack {

LfuCache::LfuCache(std::size_t capacity) : capacity_(capacity), slots_(capacity), index_(capacity) {
  heap_.reserve(capacity);
  free_slots_.reserve(capacity);
  for (std::size_t slot = capacity; slot-- > 0;) free_slots_.push_back(static_cast<std::uint32_t>(slot));
}

void LfuCache::place(std::size_t position, std::uint32_t slot) {
  heap_[position] = slot;
  slots_[slot].previous = static_cast<std::uint32_t>(position);
}

void LfuCache::sift_down(std::size_t position) {
  const std::uint32_t slot = heap_[position];
  for (;;) {
    std::size_t child = 2 * position + 1;
    if (child >= heap_.size()) break;
    if (child + 1 < heap_.size() && before(heap_[child + 1], heap_[child])) ++child;
    if (!before(heap_[child], slot)) break;
    place(position, heap_[child]);
    position = child;
  }
  place(position, slot);
}

void LfuCache::sift_up(std::size_t position) {
  const std::uint32_t slot = heap_[position];
  while (position > 0) {
    const std::size_t parent = (position - 1) / 2;
    if (!before(slot, heap_[parent])) break;
    place(position, heap_[parent]);
    position = parent;
  }
  place(position, slot);
}

void LfuCache::fifo_append(std::uint32_t slot) {
  slots_[slot].previous = fifo_tail_;
  slots_[slot].next = kNone;
  if (fifo_tail_ != kNone) {
    slots_[fifo_tail_].next = slot;
  } else {
    fifo_head_ = slot;
  }
  fifo_tail_ = slot;
}

void LfuCache::fifo_unlink(std::uint32_t slot) {
  const Slot& s = slots_[slot];
  (s.previous != kNone ? slots_[s.previous].next : fifo_head_) = s.next;
  (s.next != kNone ? slots_[s.next].previous : fifo_tail_) = s.previous;
}

void LfuCache::heap_push(std::uint32_t slot) {
  heap_.push_back(slot);
  sift_up(heap_.size() - 1);
}

void LfuCache::heap_erase(std::uint32_t slot) {
  const std::size_t position = slots_[slot].previous;
  const std::uint32_t last = heap_.back();
  heap_.pop_back();
  if (last == slot) return;
  // The last heap entry takes the erased one's place, then moves whichever way its key says.
  place(position, last);
  sift_down(position);
  sift_up(slots_[last].previous);
}

void LfuCache::fill(std::uint32_t slot, std::uint64_t tag, std::uint64_t count) {
  slots_[slot].tag = tag;
  slots_[slot].count = count;
  slots_[slot].stamp = next_stamp_++;
  index_.insert_absent(tag, slot);
  if (count == 1) {
    fifo_append(slot);
  } else {
    heap_push(slot);
  }
}

void LfuCache::unfile(std::uint32_t slot) {
  index_.erase(slots_[slot].tag);
  if (slots_[slot].count == 1) {
    fifo_unlink(slot);
  } else {
    heap_erase(slot);
  }
}

std::uint64_t LfuCache::hit(std::uint64_t tag) {
  const std::uint32_t* found = index_.find(tag);
  if (found == nullptr) return 0;
  const std::uint32_t slot = *found;
  Slot& entry = slots_[slot];
  entry.stamp = next_stamp_++;
  if (++entry.count == 2) {
    fifo_unlink(slot);
    heap_push(slot);
  } else {
    sift_down(entry.previous);  // the key only grew: the entry can only sink
  }
  return entry.count;
}

std::optional<LfuCache::Entry> LfuCache::insert(std::uint64_t tag, std::uint64_t count) {
  if (capacity_ == 0) throw std::logic_error("LfuCache::insert on a zero-capacity cache");
  if (count == 0) throw std::logic_error("LfuCache::insert with a zero count");
  if (!full()) {
    const std::uint32_t slot = free_slots_.back();
    free_slots_.pop_back();
    fill(slot, tag, count);
    ++size_;
    return std::nullopt;
  }
  // The victim's slot takes the new entry at once (what a removal and a free-list round trip would give).
  const std::uint32_t victim = fifo_head_ != kNone ? fifo_head_ : heap_[0];
  const Entry evicted{slots_[victim].tag, slots_[victim].count};
  unfile(victim);
  fill(victim, tag, count);
  return evicted;
}

std::uint64_t LfuCache::remove(std::uint64_t tag) {
  const std::uint32_t* found = index_.find(tag);
  if (found == nullptr) return 0;
  const std::uint32_t slot = *found;
  const std::uint64_t count = slots_[slot].count;
  unfile(slot);
  free_slots_.push_back(slot);
  --size_;
  return count;
}

std::vector<LfuCache::Entry> LfuCache::entries() const {
  std::vector<Entry> out;
  out.reserve(size_);
  for (std::uint32_t slot = fifo_head_; slot != kNone; slot = slots_[slot].next) out.push_back({slots_[slot].tag, 1});
  for (std::uint32_t slot : heap_) out.push_back({slots_[slot].tag, slots_[slot].count});
  return out;
}

}  // namespace flowtrack
