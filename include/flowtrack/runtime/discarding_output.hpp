// A burst loop's output that keeps no verdict, only the stage clock's marks: for a run that measures
// (`bench scale`), where what leaves is of no interest and recording it would be work the run is not
// about.
#pragma once

#include <cstdint>
#include <span>

#include "flowtrack/runtime/stage_clock.hpp"

namespace flowtrack {

struct DiscardingOutput {
  StageClock& clock;

  void verdict(const NfPacket&, Verdict) {}
  void held(std::span<const std::uint8_t>, std::uint32_t) {}
  void stage_done(NfStage stage) { clock.stage_done(stage); }
};

}  // namespace flowtrack
