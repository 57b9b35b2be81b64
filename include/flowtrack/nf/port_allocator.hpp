// The external ports of one (public address, protocol) that one core may hand out: the core's slice
// of the NAT's port range (so a reply's destination port names the core that owns its mapping, seed
// 003), with a quarantine after release (RFC 6888 REQ-8: a port is not reused for a while, so late
// packets of the old mapping cannot reach the new one).
//
// allocate() takes the preferred port when it is in the slice and free (port preservation), else the
// first free port from a random point of the slice (RFC 6056's random start), so ports do not leak
// which inside port or which order they came from; it returns 0 when every port is in use or in
// quarantine. Cost: O(1) for a free preferred port, else a scan that stops at the first free port
// (O(slice) only when the slice is nearly exhausted).
#pragma once

#include <cstdint>
#include <vector>

#include "flowtrack/aging/clock.hpp"
#include "flowtrack/io/random.hpp"

namespace flowtrack {

class PortAllocator {
 public:
  // Ports first..last (host order, first >= 1, first <= last).
  PortAllocator(std::uint16_t first, std::uint16_t last, Nanos quarantine, std::uint64_t seed);

  std::uint16_t allocate(std::uint16_t preferred, Nanos now);
  void release(std::uint16_t port, Nanos now);

  bool owns(std::uint16_t port) const { return port >= first_ && port <= last_; }
  bool in_use(std::uint16_t port) const { return owns(port) && busy_until_[port - first_] == kInUse; }
  std::size_t in_use_count() const { return in_use_; }
  std::size_t size() const { return busy_until_.size(); }

 private:
  static constexpr Nanos kInUse = ~Nanos{0};
  bool available(std::size_t slot, Nanos now) const { return busy_until_[slot] != kInUse && busy_until_[slot] <= now; }

  std::uint16_t first_, last_;
  Nanos quarantine_;
  std::vector<Nanos> busy_until_;  // by port - first: kInUse, or the time the port is free again
  std::size_t in_use_ = 0;
  Random rng_;
};

}  // namespace flowtrack
