// A replay's schedule of pool changes ([[change]] in the LB's configuration, pool_schedule.hpp), played
// into a worker's mailbox: a source that wraps the worker's own and, as the packet clock passes a
// change's time, posts the change and cuts the burst before the first packet that must see it. The
// engine handles the mail after the source hands the burst over and before the function sees it
// (runtime/burst_loop.hpp), so each change reaches the function between the last packet before its time
// and the first at or after it, whatever the burst size: the functions check no schedule themselves.
//
// Packets of a cut burst not yet handed over are held here and handed out first at the next call. A
// source whose bursts share one time (ports: every packet stamped at its reception) is never cut.
#pragma once

#include <algorithm>
#include <array>
#include <span>

#include "flowtrack/nf/pool_schedule.hpp"
#include "flowtrack/runtime/burst_loop.hpp"
#include "flowtrack/runtime/mailbox.hpp"

namespace flowtrack {

template <class Source>
class ScheduledSource {
 public:
  ScheduledSource(Source& inner, PoolChangeSchedule schedule, Mailbox& mailbox)
      : inner_(inner), schedule_(std::move(schedule)), mailbox_(mailbox) {}

  static constexpr bool kParsesPackets = ParsingSource<Source>;  // its packets are the inner source's

  LinkType link_type() const { return inner_.link_type(); }
  bool done() const { return held_count_ == 0 && inner_.done(); }
  // A ticking source ticks through (runtime/engine.hpp).
  Nanos tick()
    requires requires(Source& source) { source.tick(); }
  {
    return inner_.tick();
  }

  std::size_t next(std::span<NfPacket> burst) {
    std::size_t n = take(burst);
    if (n == 0) return 0;
    if (burst[0].time >= schedule_.next_due()) {
      schedule_.advance(burst[0].time, [&](const PoolChange& change) { mailbox_.post(change); });
    }
    if (burst[n - 1].time >= schedule_.next_due()) n = cut(burst.first(n));
    return n;
  }

 private:
  // Held packets first, then the inner source's.
  std::size_t take(std::span<NfPacket> burst) {
    if (held_count_ == 0) return inner_.next(burst);
    const std::size_t n = std::min(burst.size(), held_count_);
    std::copy_n(held_.begin() + held_first_, n, burst.begin());
    held_first_ += n;
    held_count_ -= n;
    return n;
  }

  // Holds back the packets from the first one due the next change on, before those still held; returns
  // how many are left. The first packet is never due (its changes were just posted), so a cut burst
  // keeps at least one. Everything held came from one burst of the inner source: it fits.
  std::size_t cut(std::span<NfPacket> burst) {
    const Nanos due = schedule_.next_due();
    const auto first_due = std::find_if(burst.begin() + 1, burst.end(), [&](const NfPacket& p) { return p.time >= due; });
    const auto keep = static_cast<std::size_t>(first_due - burst.begin());
    std::array<NfPacket, kMaxBurst> still_held;
    std::copy_n(held_.begin() + held_first_, held_count_, still_held.begin());
    const auto cut_off = std::copy(first_due, burst.end(), held_.begin());
    std::copy_n(still_held.begin(), held_count_, cut_off);
    held_first_ = 0;
    held_count_ += burst.size() - keep;
    return keep;
  }

  Source& inner_;
  PoolChangeSchedule schedule_;
  Mailbox& mailbox_;
  std::array<NfPacket, kMaxBurst> held_;
  std::size_t held_first_ = 0, held_count_ = 0;
};

}  // namespace flowtrack
