// What a saved state keeps of a live connection (ConnTracker::save), and what a fresh tracker takes
// back (ConnTracker::restore): its two tuples, its protocol state, and the time it has left.
#pragma once

#include <cstdint>

#include "flowtrack/util/time.hpp"
#include "flowtrack/conntrack/tcp_state.hpp"

namespace flowtrack {

template <class Key>
struct SavedConnection {
  Key original, reply;
  std::uint8_t protocol = 0;
  bool replied = false;  // a packet was seen in the reply direction
  TcpTracking tcp;
  Nanos remaining = 0;  // until it expires if no packet comes
  bool one_way = false;  // its answers never pass the tracker (ConnTracker::create_one_way)

  bool operator==(const SavedConnection&) const = default;
};

}  // namespace flowtrack
