// TSC cycles by stage of the burst loop (NfStage): each stage_done(stage) charges the cycles since the
// previous mark to `stage`. Off, a mark costs one predictable branch, so the throughput runs leave it
// off and a separate run turns it on for the split (a clock read per stage is ~1 % at 32 packets a
// burst, but as much again as the work at one packet a burst).
#pragma once

#include <x86intrin.h>

#include <array>
#include <cstdint>

#include "flowtrack/nf/network_function.hpp"

namespace flowtrack {

class StageClock {
 public:
  explicit StageClock(bool on) : on_(on) {}

  void start() {
    if (on_) last_ = __rdtsc();
  }
  void stage_done(NfStage stage) {
    if (!on_) return;
    const std::uint64_t now = __rdtsc();
    cycles_[static_cast<std::size_t>(stage)] += now - last_;
    last_ = now;
  }
  bool on() const { return on_; }
  const std::array<std::uint64_t, kNfStageCount>& cycles() const { return cycles_; }

 private:
  bool on_;
  std::uint64_t last_ = 0;
  std::array<std::uint64_t, kNfStageCount> cycles_{};
};

}  // namespace flowtrack
