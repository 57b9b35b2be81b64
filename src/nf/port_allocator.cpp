#include "flowtrack/nf/port_allocator.hpp"

#include <stdexcept>

namespace flowtrack {

PortAllocator::PortAllocator(std::uint16_t first, std::uint16_t last, Nanos quarantine, std::uint64_t seed)
    : first_(first), last_(last), quarantine_(quarantine), rng_(seed) {
  if (first == 0 || first > last) throw std::invalid_argument("port allocator: need 1 <= first <= last");
  const std::size_t n = static_cast<std::size_t>(last - first) + 1;
  in_use_flag_.assign(n, false);
  position_.assign(n, kNotFree);
  free_.reserve(n);
  queue_.resize(n);
  for (std::size_t slot = 0; slot < n; ++slot) add_free(static_cast<Slot>(slot));
}

void PortAllocator::add_free(Slot slot) {
  position_[slot] = static_cast<Slot>(free_.size());
  free_.push_back(slot);
}

void PortAllocator::take_free(Slot slot) {
  const Slot at = position_[slot];
  const Slot last = free_.back();
  free_[at] = last;
  position_[last] = at;
  free_.pop_back();
  position_[slot] = kNotFree;
}

void PortAllocator::end_quarantines(Nanos now) {
  while (queue_length_ != 0 && queue_[queue_head_].free_at <= now) {
    add_free(queue_[queue_head_].slot);
    queue_head_ = (queue_head_ + 1) % queue_.size();
    --queue_length_;
  }
}

std::uint16_t PortAllocator::allocate(std::uint16_t preferred, Nanos now) {
  end_quarantines(now);
  if (free_.empty()) return 0;
  Slot slot;
  if (owns(preferred) && position_[preferred - first_] != kNotFree) {
    slot = static_cast<Slot>(preferred - first_);
  } else {
    slot = free_[rng_.below(free_.size())];
  }
  take_free(slot);
  in_use_flag_[slot] = true;
  ++in_use_;
  return static_cast<std::uint16_t>(first_ + slot);
}

void PortAllocator::release(std::uint16_t port, Nanos now) {
  if (!in_use(port)) return;
  const auto slot = static_cast<Slot>(port - first_);
  in_use_flag_[slot] = false;
  --in_use_;
  if (quarantine_ == 0) {
    add_free(slot);
    return;
  }
  // A port in quarantine is neither in use nor free, so the queue never holds more than size() ports.
  queue_[(queue_head_ + queue_length_) % queue_.size()] = {now + quarantine_, slot};
  ++queue_length_;
}

}  // namespace flowtrack
