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
  slots_[slot].heap_position = static_cast<std::uint32_t>(position);
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

std::uint64_t LfuCache::hit(std::uint64_t tag) {
  const std::uint32_t* slot = index_.find(tag);
  if (slot == nullptr) return 0;
  Slot& entry = slots_[*slot];
  ++entry.count;
  entry.stamp = next_stamp_++;
  // The key only grew: the entry can only sink.
  sift_down(entry.heap_position);
  return entry.count;
}

std::optional<LfuCache::Entry> LfuCache::insert(std::uint64_t tag, std::uint64_t count) {
  if (capacity_ == 0) throw std::logic_error("LfuCache::insert on a zero-capacity cache");
  if (full()) {
    // The newcomer takes the victim's slot and its place at the root, then sinks: one sift.
    const std::uint32_t victim = heap_[0];
    const Entry evicted{slots_[victim].tag, slots_[victim].count};
    index_.erase(evicted.tag);
    index_.assign(tag, victim);
    slots_[victim].tag = tag;
    slots_[victim].count = count;
    slots_[victim].stamp = next_stamp_++;
    sift_down(0);
    return evicted;
  }
  const std::uint32_t slot = free_slots_.back();
  free_slots_.pop_back();
  slots_[slot] = {tag, count, next_stamp_++, 0};
  index_.assign(tag, slot);
  heap_.push_back(slot);
  sift_up(heap_.size() - 1);
  return std::nullopt;
}

std::uint64_t LfuCache::remove(std::uint64_t tag) {
  const std::uint32_t* found = index_.find(tag);
  if (found == nullptr) return 0;
  const std::uint32_t slot = *found;
  index_.erase(tag);
  const std::uint64_t count = slots_[slot].count;
  const std::size_t position = slots_[slot].heap_position;
  const std::uint32_t last = heap_.back();
  heap_.pop_back();
  if (last != slot) {
    // The last heap entry takes the removed one's place, then moves whichever way its key says.
    place(position, last);
    sift_down(position);
    sift_up(slots_[last].heap_position);
  }
  free_slots_.push_back(slot);
  return count;
}

std::vector<LfuCache::Entry> LfuCache::entries() const {
  std::vector<Entry> out;
  out.reserve(heap_.size());
  for (std::uint32_t slot : heap_) out.push_back({slots_[slot].tag, slots_[slot].count});
  return out;
}

}  // namespace flowtrack
