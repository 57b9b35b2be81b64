#include "flowtrack/sched/tag_index.hpp"

#include <bit>

#include "flowtrack/util/assert.hpp"

namespace flowtrack {

// A quarter full at the expected size: shorter clusters make each lookup and each erase's backward
// shift shorter and better predicted.
TagIndex::TagIndex(std::size_t expected) { rebuild(std::bit_ceil(std::max<std::size_t>(4 * expected, 8))); }

void TagIndex::rebuild(std::size_t capacity) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  shift_ = 64 - static_cast<unsigned>(std::countr_zero(capacity));
  size_ = 0;
  for (const Slot& slot : old) {
    if (slot.tag != kEmptyTag) assign(slot.tag, slot.value);
  }
}

void TagIndex::assign(std::uint64_t tag, std::uint32_t value) {
  if (std::uint32_t* existing = find(tag)) {
    *existing = value;
    return;
  }
  insert_absent(tag, value);
}

void TagIndex::insert_absent(std::uint64_t tag, std::uint32_t value) {
  FLOWTRACK_ASSERT(find(tag) == nullptr, "insert_absent is given a tag that is not stored");
  if (2 * (size_ + 1) > slots_.size()) rebuild(2 * slots_.size());
  std::size_t i = home(tag);
  while (slots_[i].tag != kEmptyTag) i = (i + 1) & mask_;
  slots_[i] = {tag, value};
  ++size_;
}

bool TagIndex::erase(std::uint64_t tag) {
  std::size_t hole = home(tag);
  while (slots_[hole].tag != tag) {
    if (slots_[hole].tag == kEmptyTag) return false;
    hole = (hole + 1) & mask_;
  }
  // Backward shift: walk the rest of the cluster and pull back every entry whose home does not lie
  // cyclically in (hole, i], i.e. whose probe path crosses the hole; it fills the hole, and its old
  // place becomes the new hole.
  for (std::size_t i = (hole + 1) & mask_; slots_[i].tag != kEmptyTag; i = (i + 1) & mask_) {
    const std::size_t h = home(slots_[i].tag);
    const bool home_in_between = hole < i ? (hole < h && h <= i) : (hole < h || h <= i);
    if (!home_in_between) {
      slots_[hole] = slots_[i];
      hole = i;
    }
  }
  slots_[hole] = Slot{};
  --size_;
  return true;
}

}  // namespace flowtrack
