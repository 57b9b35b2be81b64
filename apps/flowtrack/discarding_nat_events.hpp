// The sync events of a NAT of a pair made and thrown away (`bench nf --nat-sync-events`): what telling a
// standby costs the NAT's worker, without the link. Each event is copied into a small ring of the latest
// ones, the stores a push into the pair's ring (nf/nat_event_ring.hpp) makes, and counted; nothing reads
// them but the count.
#pragma once

#include <array>
#include <cstdint>

#include "flowtrack/nf/nat_events.hpp"

namespace flowtrack::cli {

class DiscardingNatEvents {
 public:
  static constexpr bool kEnabled = true;

  void emit(const NatEvent& event) {
    latest_[emitted_ % latest_.size()] = event;
    ++emitted_;
  }
  std::uint64_t emitted() const { return emitted_; }

 private:
  std::array<NatEvent, 64> latest_{};
  std::uint64_t emitted_ = 0;
};

}  // namespace flowtrack::cli
