// The replay's output (a PacketOutput, burst_loop.hpp): a function's verdict for each packet is one
// byte, its frame's length one word and the headroom left before it (a tunnel's headers start the frame
// earlier) half a word, stored by the packet's slot in the ReplaySource, so that the timed loop copies no
// packet; the packets themselves stay, rewritten, in the source's arena. A held packet released by a
// function is copied (it lives in the function, which reuses its buffer), tagged with the slot after
// which it leaves. After the run, write_to() lays the output out in order.
#pragma once

#include <cstdint>
#include <vector>

#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/runtime/replay_source.hpp"

namespace flowtrack {

class VerdictLog {
 public:
  explicit VerdictLog(const ReplaySource& source)
      : verdicts_(source.size(), Verdict::drop),
        lengths_(source.size(), 0),
        wire_lengths_(source.size(), 0),
        headrooms_(source.size(), 0) {}

  void verdict(const NfPacket& packet, Verdict verdict) {
    verdicts_[packet.slot] = verdict;
    lengths_[packet.slot] = static_cast<std::uint32_t>(packet.frame.size());
    headrooms_[packet.slot] = packet.headroom;
    wire_lengths_[packet.slot] = packet.wire_length;
    last_slot_ = packet.slot;
  }
  void held(std::span<const std::uint8_t> frame, std::uint32_t wire_length) {
    held_.push_back({last_slot_, std::vector<std::uint8_t>(frame.begin(), frame.end()), wire_length});
  }

  std::uint64_t count(Verdict v) const;
  std::uint64_t held_count() const { return held_.size(); }

  // Appends what went out, in order: each forwarded or answered packet (a reply joins the one output,
  // as a replayed trace has one link), each released held packet right after the packet that released
  // it. Times are the packets' arrival times (a released one: its releaser's).
  void write_to(const ReplaySource& source, PacketStore& out) const;

 private:
  struct Held {
    std::uint32_t after_slot;
    std::vector<std::uint8_t> frame;
    std::uint32_t wire_length;
  };

  std::vector<Verdict> verdicts_;  // by slot; a packet no function saw (unparsable) stays a drop
  std::vector<std::uint32_t> lengths_, wire_lengths_;
  std::vector<std::uint16_t> headrooms_;
  std::vector<Held> held_;
  std::uint32_t last_slot_ = 0;
};

}  // namespace flowtrack
