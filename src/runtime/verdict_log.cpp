#include "flowtrack/runtime/verdict_log.hpp"

#include <algorithm>

namespace flowtrack {

std::uint64_t VerdictLog::count(Verdict v) const {
  return static_cast<std::uint64_t>(std::count(verdicts_.begin(), verdicts_.end(), v));
}

void VerdictLog::write_to(const ReplaySource& source, PacketStore& out) const {
  auto held = held_.begin();
  for (std::uint32_t slot = 0; slot < verdicts_.size(); ++slot) {
    const Verdict v = verdicts_[slot];
    if (v == Verdict::forward || v == Verdict::reply) {
      out.append(source.bytes(slot, headrooms_[slot], lengths_[slot]), source.time_of(slot), wire_lengths_[slot]);
    }
    for (; held != held_.end() && held->after_slot == slot; ++held) out.append(held->frame, source.time_of(slot), held->wire_length);
  }
}

}  // namespace flowtrack
