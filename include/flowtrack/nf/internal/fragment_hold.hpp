// Later fragments that arrive before their datagram's first fragment (RFC 4787 REQ-14: out of order):
// without the first fragment nobody knows their translation yet, so a copy waits here until it comes
// (resolve: translated in place, then ready) or until `lifetime` has passed (expire: dropped). Ready
// copies leave through release(), which the NAT calls after every packet of a burst.
//
// Bounded: `slots` copies of at most kFrameBytes each, allocated once; a fragment that finds no free
// slot, or is larger, is refused (the caller counts the drop). Every operation scans the slots, but only
// while some are in the state it looks for (counts kept), so a NAT without fragments pays nothing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/nf/internal/fragment_cache.hpp"
#include "flowtrack/nf/nf_packet.hpp"
#include "flowtrack/util/time.hpp"

namespace flowtrack {

class FragmentHold {
 public:
  static constexpr std::size_t kFrameBytes = 9216;  // a jumbo frame

  FragmentHold(std::size_t slots, Nanos lifetime);

  // Keeps a copy of `packet`, a later fragment of datagram `key`; false when refused.
  bool hold(const NfPacket& packet, const FragmentKey& key, Nanos now);

  // The first fragment of `key` has been translated: rewrite(frame, parsed) translates each of its waiting
  // fragments in place, which are then ready.
  template <class Rewrite>
  void resolve(const FragmentKey& key, Rewrite&& rewrite) {
    for (std::size_t i = 0; i < slots_.size() && waiting_ != 0; ++i) {
      Slot& s = slots_[i];
      if (s.state != State::waiting || !(s.key == key)) continue;
      rewrite(frame_of(i), s.parsed);
      s.state = State::ready;
      --waiting_;
      ++ready_;
    }
  }

  // Hands each ready fragment to emit(frame, wire_length) and frees its slot; returns how many.
  template <class Emit>
  std::size_t release(Emit&& emit) {
    std::size_t released = 0;
    for (std::size_t i = 0; i < slots_.size() && ready_ != 0; ++i) {
      Slot& s = slots_[i];
      if (s.state != State::ready) continue;
      emit(std::span<const std::uint8_t>(frame_of(i)), s.wire_length);
      s.state = State::free;
      --ready_;
      ++released;
    }
    return released;
  }

  // Drops the fragments that have waited `lifetime` or more; returns how many.
  std::size_t expire(Nanos now);

 private:
  enum class State : std::uint8_t { free, waiting, ready };
  struct Slot {
    State state = State::free;
    FragmentKey key;
    ParsedPacket parsed;  // of the copy: the offsets a rewrite needs
    std::uint32_t length = 0, wire_length = 0;
    Nanos arrived = 0;
  };
  std::span<std::uint8_t> frame_of(std::size_t slot) { return {bytes_.data() + slot * kFrameBytes, slots_[slot].length}; }

  std::vector<Slot> slots_;
  std::vector<std::uint8_t> bytes_;  // slot i's copy at i * kFrameBytes
  Nanos lifetime_;
  std::size_t waiting_ = 0, ready_ = 0;  // slots in each state: a scan for a state ends once none is left in it
};

}  // namespace flowtrack
