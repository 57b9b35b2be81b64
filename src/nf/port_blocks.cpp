#include "flowtrack/nf/internal/port_blocks.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "flowtrack/util/assert.hpp"

namespace flowtrack {
namespace {

std::size_t slot_count(std::uint16_t first, std::uint16_t last) {
  if (first == 0 || first > last) throw std::invalid_argument("port blocks: need 1 <= first <= last");
  return static_cast<std::size_t>(last - first) + 1;
}

std::size_t checked_blocks(std::size_t slots, std::uint16_t block_size) {
  if (block_size == 0) throw std::invalid_argument("port blocks: the block size must be at least 1");
  return (slots + block_size - 1) / block_size;
}

}  // namespace

PortBlocks::PortBlocks(std::uint32_t public_addr, std::uint16_t first, std::uint16_t last, std::uint16_t block_size,
                       Nanos quarantine, std::uint64_t seed)
    : public_addr_(public_addr),
      first_(first),
      last_(last),
      block_size_(block_size),
      quarantine_(quarantine),
      blocks_(checked_blocks(slot_count(first, last), block_size)),
      port_quarantine_{QuarantineQueue<Slot>(slot_count(first, last)), QuarantineQueue<Slot>(slot_count(first, last)),
                       QuarantineQueue<Slot>(slot_count(first, last))},
      block_quarantine_(blocks_.size()),
      rng_(seed) {
  const std::size_t slots = slot_count(first, last);
  for (unsigned p = 0; p < kProtocols; ++p) {
    holders_[p].assign(slots, kNoHolder);
    free_words_[p].assign((slots + 63) / 64, 0);
    free_in_block_[p].assign(blocks_.size(), 0);
    for (std::size_t slot = 0; slot < slots; ++slot) add_free(p, static_cast<Slot>(slot));
  }
  free_blocks_.reserve(blocks_.size());
  for (std::uint32_t b = 0; b < blocks_.size(); ++b) add_free_block(b);
  first_block_of_.reserve(blocks_.size());
}

std::uint16_t PortBlocks::last_port_of(std::uint32_t block) const {
  return static_cast<std::uint16_t>(std::min<unsigned>(last_, first_port_of(block) + block_size_ - 1u));
}

std::uint32_t PortBlocks::block_at(std::uint16_t port) const {
  if (!owns(port) || (port - first_) % block_size_ != 0) return kNoBlock;
  return block_of(static_cast<Slot>(port - first_));
}

void PortBlocks::add_free(unsigned protocol, Slot slot) {
  free_words_[protocol][slot / 64] |= std::uint64_t{1} << (slot % 64);
  ++free_in_block_[protocol][block_of(slot)];
}

void PortBlocks::take_free(unsigned protocol, Slot slot) {
  free_words_[protocol][slot / 64] &= ~(std::uint64_t{1} << (slot % 64));
  --free_in_block_[protocol][block_of(slot)];
}

PortBlocks::Slot PortBlocks::nth_free(unsigned protocol, std::uint32_t block, std::size_t r) const {
  FLOWTRACK_ASSERT(r < free_in_block_[protocol][block], "nth_free: r counts the block's free slots");
  const std::size_t begin = std::size_t{block} * block_size_;
  const std::size_t end = static_cast<std::size_t>(last_port_of(block) - first_) + 1;
  for (std::size_t word = begin / 64;; ++word) {
    // The word's bits that lie in the block.
    std::uint64_t bits = free_words_[protocol][word];
    if (word == begin / 64) bits &= ~std::uint64_t{0} << (begin % 64);
    if (word == (end - 1) / 64 && end % 64 != 0) bits &= ~(~std::uint64_t{0} << (end % 64));
    const auto count = static_cast<std::size_t>(std::popcount(bits));
    if (r < count) {
      for (; r != 0; --r) bits &= bits - 1;  // drop the r lowest free slots of the word
      return static_cast<Slot>(word * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
    }
    r -= count;
  }
}

PortBlocks::Slot PortBlocks::draw(unsigned protocol, std::uint32_t block) {
  return nth_free(protocol, block, rng_.below(free_in_block_[protocol][block]));
}

std::uint16_t PortBlocks::take(unsigned protocol, Slot slot, std::uint32_t holder) {
  take_free(protocol, slot);
  holders_[protocol][slot] = holder;
  ++blocks_[block_of(slot)].in_use;
  ++in_use_;
  return static_cast<std::uint16_t>(first_ + slot);
}

void PortBlocks::end_quarantines(Nanos now) {
  // Ports first: a block leaving its quarantine finds every one of its ports free (see the header).
  for (unsigned p = 0; p < kProtocols; ++p) port_quarantine_[p].pop_due(now, [&](Slot slot) { add_free(p, slot); });
  block_quarantine_.pop_due(now, [&](std::uint32_t block) {
    blocks_[block].state = BlockState::free;
    add_free_block(block);
  });
}

void PortBlocks::add_free_block(std::uint32_t block) {
  blocks_[block].free_position = static_cast<std::uint32_t>(free_blocks_.size());
  free_blocks_.push_back(block);
}

void PortBlocks::take_free_block(std::uint32_t block) {
  const std::uint32_t position = blocks_[block].free_position;
  free_blocks_[position] = free_blocks_.back();
  blocks_[free_blocks_[position]].free_position = position;
  free_blocks_.pop_back();
}

void PortBlocks::hold(std::uint32_t block, std::uint32_t subscriber) {
  take_free_block(block);
  Block& b = blocks_[block];
  b.state = BlockState::held;
  b.owner = subscriber;
  b.prev = kNoBlock;
  const auto [head, inserted] = first_block_of_.try_emplace(subscriber, block);
  b.next = inserted ? kNoBlock : head->second;
  if (!inserted) {
    blocks_[head->second].prev = block;
    head->second = block;
  }
  ++held_;
}

PortBlockRecord PortBlocks::record_of(std::uint32_t block, std::uint32_t owner, PortBlockRecord::Event event, Nanos now) const {
  return {.time = now,
          .inside_addr = owner,
          .public_addr = public_addr_,
          .first_port = first_port_of(block),
          .last_port = last_port_of(block),
          .event = event};
}

void PortBlocks::give_back(std::uint32_t block, Nanos now) {
  Block& b = blocks_[block];
  if (log_ != nullptr) log_->released(record_of(block, b.owner, PortBlockRecord::Event::released, now));
  if (b.prev != kNoBlock) blocks_[b.prev].next = b.next;
  if (b.next != kNoBlock) blocks_[b.next].prev = b.prev;
  if (b.prev == kNoBlock) {
    if (b.next == kNoBlock) {
      first_block_of_.erase(b.owner);
    } else {
      first_block_of_[b.owner] = b.next;
    }
  }
  b.prev = b.next = kNoBlock;
  --held_;
  if (quarantine_ == 0) {
    b.state = BlockState::free;
    add_free_block(block);
  } else {
    b.state = BlockState::quarantined;
    block_quarantine_.push(now + quarantine_, block);
  }
}

std::uint16_t PortBlocks::allocate(std::uint32_t subscriber, unsigned protocol, std::uint16_t preferred, Nanos now,
                                   std::uint32_t holder, Refusal& refusal) {
  FLOWTRACK_ASSERT(holder != kNoHolder, "a port's holder is never kNoHolder, which marks a port not in use");
  refusal = Refusal::none;
  port_quarantine_[protocol].pop_due(now, [&](Slot slot) { add_free(protocol, slot); });
  if (owns(preferred)) {
    const auto slot = static_cast<Slot>(preferred - first_);
    const Block& b = blocks_[block_of(slot)];
    if (b.state == BlockState::held && b.owner == subscriber && is_free(protocol, slot)) return take(protocol, slot, holder);
  }
  const auto own = first_block_of_.find(subscriber);
  for (std::uint32_t b = own == first_block_of_.end() ? kNoBlock : own->second; b != kNoBlock; b = blocks_[b].next) {
    if (free_in_block_[protocol][b] != 0) return take(protocol, draw(protocol, b), holder);
  }
  end_quarantines(now);
  if (free_blocks_.empty()) {
    refusal = Refusal::no_port;
    return 0;
  }
  const std::uint32_t block = free_blocks_[rng_.below(free_blocks_.size())];
  // Unrecorded, a block is not given.
  if (log_ != nullptr && !log_->allocated(record_of(block, subscriber, PortBlockRecord::Event::allocated, now))) {
    refusal = Refusal::log_full;
    return 0;
  }
  hold(block, subscriber);
  FLOWTRACK_ASSERT(free_in_block_[protocol][block] == last_port_of(block) - first_port_of(block) + 1u,
                   "a block leaves the free set with every port free");
  return take(protocol, draw(protocol, block), holder);
}

void PortBlocks::release(unsigned protocol, std::uint16_t port, Nanos now) {
  if (holder_of(protocol, port) == kNoHolder) return;
  const auto slot = static_cast<Slot>(port - first_);
  holders_[protocol][slot] = kNoHolder;
  --in_use_;
  if (quarantine_ == 0) {
    add_free(protocol, slot);
  } else {
    port_quarantine_[protocol].push(now + quarantine_, slot);
  }
  const std::uint32_t block = block_of(slot);
  if (--blocks_[block].in_use == 0) give_back(block, now);
}

bool PortBlocks::restore_block(std::uint32_t subscriber, std::uint16_t first_port) {
  const std::uint32_t block = block_at(first_port);
  if (block == kNoBlock || blocks_[block].state != BlockState::free) return false;
  if (log_ != nullptr && !log_->adopt_held_blocks(1)) return false;
  hold(block, subscriber);
  return true;
}

bool PortBlocks::restore_in_use(std::uint32_t subscriber, unsigned protocol, std::uint16_t port, std::uint32_t holder) {
  if (!owns(port) || holder == kNoHolder) return false;
  const auto slot = static_cast<Slot>(port - first_);
  const Block& b = blocks_[block_of(slot)];
  if (b.state != BlockState::held || b.owner != subscriber || !is_free(protocol, slot)) return false;
  take(protocol, slot, holder);
  return true;
}

bool PortBlocks::restore_quarantined_block(std::uint16_t first_port, Nanos free_at) {
  const std::uint32_t block = block_at(first_port);
  if (block == kNoBlock || blocks_[block].state != BlockState::free || !block_quarantine_.accepts(free_at)) return false;
  take_free_block(block);
  blocks_[block].state = BlockState::quarantined;
  block_quarantine_.push(free_at, block);
  return true;
}

bool PortBlocks::restore_quarantined_port(unsigned protocol, std::uint16_t port, Nanos free_at) {
  if (!owns(port) || protocol >= kProtocols) return false;
  const auto slot = static_cast<Slot>(port - first_);
  if (!is_free(protocol, slot) || !port_quarantine_[protocol].accepts(free_at)) return false;
  take_free(protocol, slot);
  port_quarantine_[protocol].push(free_at, slot);
  return true;
}

std::size_t PortBlocks::give_back_unused(Nanos now) {
  std::size_t n = 0;
  for (std::uint32_t b = 0; b < blocks_.size(); ++b) {
    if (blocks_[b].state == BlockState::held && blocks_[b].in_use == 0) {
      give_back(b, now);
      ++n;
    }
  }
  return n;
}

}  // namespace flowtrack
