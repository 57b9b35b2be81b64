// An output that keeps no verdict: for a run that measures (`bench scale`, `bench nf`), where what
// leaves is of no interest and recording it would be work the run is not about.
#pragma once

#include <cstdint>
#include <span>

#include "flowtrack/nf/nf_packet.hpp"

namespace flowtrack {

struct DiscardingOutput {
  void verdict(const NfPacket&, Verdict) {}
  void held(std::span<const std::uint8_t>, std::uint32_t) {}
};

}  // namespace flowtrack
