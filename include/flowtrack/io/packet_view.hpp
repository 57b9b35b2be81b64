// One captured packet as a source hands it out: a view of its bytes (valid until the source moves on or
// is destroyed), the length it had on the wire, and its timestamp.
#pragma once

#include <cstdint>
#include <span>

namespace flowtrack {

struct PacketView {
  std::span<const std::uint8_t> bytes;  // the captured bytes (may be shorter than the wire length)
  std::uint32_t wire_length = 0;
  std::uint64_t timestamp_ns = 0;
};

}  // namespace flowtrack
