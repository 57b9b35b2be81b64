#include "flowtrack/nf/internal/fragment_hold.hpp"

#include <algorithm>

namespace flowtrack {

FragmentHold::FragmentHold(std::size_t slots, Nanos lifetime)
    : slots_(slots), bytes_(slots * kFrameBytes), lifetime_(lifetime) {}

bool FragmentHold::hold(const NfPacket& packet, const FragmentKey& key, Nanos now) {
  if (packet.frame.size() > kFrameBytes || waiting_ + ready_ == slots_.size()) return false;
  const auto free = std::ranges::find(slots_, State::free, &Slot::state);
  Slot& s = *free;
  s = {State::waiting, key, packet.parsed, static_cast<std::uint32_t>(packet.frame.size()), packet.wire_length, now};
  std::ranges::copy(packet.frame, frame_of(static_cast<std::size_t>(free - slots_.begin())).begin());
  ++waiting_;
  return true;
}

std::size_t FragmentHold::expire(Nanos now) {
  std::size_t dropped = 0;
  for (std::size_t i = 0; i < slots_.size() && waiting_ != 0; ++i) {
    Slot& s = slots_[i];
    if (s.state != State::waiting || now < s.arrived + lifetime_) continue;
    s.state = State::free;
    --waiting_;
    ++dropped;
  }
  return dropped;
}

}  // namespace flowtrack
