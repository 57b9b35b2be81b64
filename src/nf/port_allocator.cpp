#include "flowtrack/nf/internal/port_allocator.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "flowtrack/util/assert.hpp"

namespace flowtrack {

// splitmix64's finaliser: every bit of x moves about half of the result's.
std::uint64_t PortAllocator::mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

PortAllocator::PortAllocator(std::uint16_t first, std::uint16_t last, Nanos quarantine, std::uint64_t seed)
    : first_(first),
      last_(last),
      quarantine_(quarantine),
      quarantine_queue_(first == 0 || first > last ? 0 : static_cast<std::size_t>(last - first) + 1),
      key_(mix(seed + 0x9e3779b97f4a7c15ull)) {
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

std::optional<PortAllocator::Slot> PortAllocator::first_free_in_words(std::size_t from, std::size_t to) const {
  for (std::size_t word = from; word < to; ++word) {
    if (free_words_[word] != 0) return static_cast<Slot>(word * 64 + static_cast<std::size_t>(std::countr_zero(free_words_[word])));
  }
  return std::nullopt;
}

PortAllocator::Slot PortAllocator::first_free_from(Slot start) const {
  FLOWTRACK_ASSERT(free_count_ > 0 && start < holders_.size(), "first_free_from: a free slot exists, the start is a slot");
  // The start's own word from the start on, then the rest of its block (free bits only mark slots
  // below size(): the last word's high bits never do).
  const std::size_t word = start / 64;
  if (const std::uint64_t bits = free_words_[word] & (~std::uint64_t{0} << (start % 64)); bits != 0) {
    return static_cast<Slot>(word * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
  }
  const std::size_t blocks = free_in_block_.size();
  const std::size_t block = word / kWordsPerBlock;
  const auto block_end = [&](std::size_t b) { return std::min((b + 1) * kWordsPerBlock, free_words_.size()); };
  if (const auto slot = first_free_in_words(word + 1, block_end(block))) return *slot;
  // The next block with a free slot, cyclically; the start's own block last, from its first word (its
  // free slots are all before the start by now).
  for (std::size_t k = 1; k <= blocks; ++k) {
    const std::size_t b = (block + k) % blocks;
    if (free_in_block_[b] == 0) continue;
    if (const auto slot = first_free_in_words(b * kWordsPerBlock, block_end(b))) return *slot;
  }
  FLOWTRACK_ASSERT(false, "free_count_ > 0 names a free slot");
  return start;
}

PortAllocator::Slot PortAllocator::candidate(std::uint64_t hash, unsigned k) const {
  const std::uint64_t draw = mix(hash + k * 0x9e3779b97f4a7c15ull);
  return static_cast<Slot>((static_cast<unsigned __int128>(draw) * holders_.size()) >> 64);
}

PortAllocator::Slot PortAllocator::drawn_for(std::uint64_t endpoint) const {
  const std::uint64_t hash = mix(endpoint ^ key_);
  Slot slot = 0;
  for (unsigned k = 0; k < kProbes; ++k) {
    slot = candidate(hash, k);
    if (is_free(slot)) return slot;
  }
  return first_free_from(slot);
}

void PortAllocator::end_quarantines(Nanos now) {
  quarantine_queue_.pop_due(now, [&](Slot slot) { add_free(slot); });
}

std::uint16_t PortAllocator::allocate(std::uint16_t preferred, Nanos now, std::uint32_t holder, std::uint64_t endpoint) {
  FLOWTRACK_ASSERT(holder != kNoHolder, "a port's holder is never kNoHolder, which marks a port not in use");
  end_quarantines(now);
  if (free_count_ == 0) return 0;
  const bool keep_preferred = owns(preferred) && is_free(static_cast<Slot>(preferred - first_));
  const Slot slot = keep_preferred ? static_cast<Slot>(preferred - first_) : drawn_for(endpoint);
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
