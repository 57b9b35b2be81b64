#include "flowtrack/nf/internal/port_allocator.hpp"

#include <bit>
#include <stdexcept>

#include "flowtrack/util/assert.hpp"

namespace flowtrack {

PortAllocator::PortAllocator(std::uint16_t first, std::uint16_t last, Nanos quarantine, std::uint64_t seed)
    : first_(first),
      last_(last),
      quarantine_(quarantine),
      quarantine_queue_(first == 0 || first > last ? 0 : static_cast<std::size_t>(last - first) + 1),
      rng_(seed) {
  if (first == 0 || first > last) throw std::invalid_argument("port allocator: need 1 <= first <= last");
  const std::size_t n = static_cast<std::size_t>(last - first) + 1;
  free_words_.assign((n + 63) / 64, 0);
  free_in_block_.assign((free_words_.size() + kWordsPerBlock - 1) / kWordsPerBlock, 0);
  holders_.assign(n, kNoHolder);
  for (std::size_t slot = 0; slot < n; ++slot) add_free(static_cast<Slot>(slot));
}

void PortAllocator::add_free(Slot slot) {
  free_words_[slot / 64] |= std::uint64_t{1} << (slot % 64);
  ++free_in_block_[slot / 64 / kWordsPerBlock];
  ++free_count_;
}

void PortAllocator::take_free(Slot slot) {
  free_words_[slot / 64] &= ~(std::uint64_t{1} << (slot % 64));
  --free_in_block_[slot / 64 / kWordsPerBlock];
  --free_count_;
}

PortAllocator::Slot PortAllocator::nth_free(std::size_t r) const {
  FLOWTRACK_ASSERT(r < free_count_, "nth_free: r counts free slots");
  std::size_t block = 0;
  while (r >= free_in_block_[block]) r -= free_in_block_[block++];
  std::size_t word = block * kWordsPerBlock;
  for (;; ++word) {
    const auto count = static_cast<std::size_t>(std::popcount(free_words_[word]));
    if (r < count) break;
    r -= count;
  }
  std::uint64_t bits = free_words_[word];
  for (; r != 0; --r) bits &= bits - 1;  // drop the r lowest free slots of the word
  return static_cast<Slot>(word * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
}

void PortAllocator::end_quarantines(Nanos now) {
  quarantine_queue_.pop_due(now, [&](Slot slot) { add_free(slot); });
}

std::uint16_t PortAllocator::allocate(std::uint16_t preferred, Nanos now, std::uint32_t holder) {
  FLOWTRACK_ASSERT(holder != kNoHolder, "a port's holder is never kNoHolder, which marks a port not in use");
  end_quarantines(now);
  if (free_count_ == 0) return 0;
  const bool keep_preferred = owns(preferred) && is_free(static_cast<Slot>(preferred - first_));
  const Slot slot = keep_preferred ? static_cast<Slot>(preferred - first_) : nth_free(rng_.below(free_count_));
  take_free(slot);
  holders_[slot] = holder;
  ++in_use_;
  return static_cast<std::uint16_t>(first_ + slot);
}

void PortAllocator::release(std::uint16_t port, Nanos now) {
  if (!in_use(port)) return;
  const auto slot = static_cast<Slot>(port - first_);
  holders_[slot] = kNoHolder;
  --in_use_;
  if (quarantine_ == 0) {
    add_free(slot);
    return;
  }
  // A port in quarantine is neither in use nor free, so the queue never holds more than size() ports.
  quarantine_queue_.push(now + quarantine_, slot);
}

bool PortAllocator::restore_in_use(std::uint16_t port, std::uint32_t holder) {
  if (!owns(port) || holder == kNoHolder || !is_free(static_cast<Slot>(port - first_))) return false;
  const auto slot = static_cast<Slot>(port - first_);
  take_free(slot);
  holders_[slot] = holder;
  ++in_use_;
  return true;
}

bool PortAllocator::restore_quarantined(std::uint16_t port, Nanos free_at) {
  if (!owns(port) || !is_free(static_cast<Slot>(port - first_)) || !quarantine_queue_.accepts(free_at)) return false;
  const auto slot = static_cast<Slot>(port - first_);
  take_free(slot);
  quarantine_queue_.push(free_at, slot);
  return true;
}

}  // namespace flowtrack
