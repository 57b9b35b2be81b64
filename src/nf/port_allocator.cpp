#include "flowtrack/nf/port_allocator.hpp"

#include <stdexcept>

namespace flowtrack {

PortAllocator::PortAllocator(std::uint16_t first, std::uint16_t last, Nanos quarantine, std::uint64_t seed)
    : first_(first), last_(last), quarantine_(quarantine), rng_(seed) {
  if (first == 0 || first > last) throw std::invalid_argument("port allocator: need 1 <= first <= last");
  busy_until_.assign(static_cast<std::size_t>(last - first) + 1, 0);
}

std::uint16_t PortAllocator::allocate(std::uint16_t preferred, Nanos now) {
  const std::size_t n = busy_until_.size();
  std::size_t slot = n;
  if (owns(preferred) && available(preferred - first_, now)) {
    slot = preferred - first_;
  } else {
    const std::size_t start = rng_.below(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t candidate = (start + i) % n;
      if (available(candidate, now)) {
        slot = candidate;
        break;
      }
    }
  }
  if (slot == n) return 0;
  busy_until_[slot] = kInUse;
  ++in_use_;
  return static_cast<std::uint16_t>(first_ + slot);
}

void PortAllocator::release(std::uint16_t port, Nanos now) {
  if (!in_use(port)) return;
  busy_until_[port - first_] = now + quarantine_;
  --in_use_;
}

}  // namespace flowtrack
