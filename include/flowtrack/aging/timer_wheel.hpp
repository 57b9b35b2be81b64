// "wheel": a hierarchical hashed timer wheel over FlowIds, with lazy re-arm.
//
// Time is cut into ticks of `tick` ns. Level l (0 <= l < levels) has 256 slots, each covering 256^l
// ticks; a timer due at tick e, placed while the wheel stands at tick c, goes to the lowest level whose
// span holds e - c, in slot (e >> 8l) & 255. Level 0 slots are processed at their tick; a level l slot
// is processed at the first tick after placement that is a multiple of 256^l and has that slot index,
// which is never later than e (see place() in timer_wheel.cpp). Processing a slot pops each timer: a
// flow whose deadline has passed expires, any other is placed again from its current deadline. That one
// rule does both the cascade from upper levels and the lazy re-arm: touch() only stores the new
// deadline and never moves the timer, and a timer that fires early for a flow that was touched since
// simply goes back into the wheel. Timeouts longer than the wheel's reach (256^levels ticks) park in
// the top level and are re-placed until they are in reach.
//
// Each slot is an intrusive doubly linked list threaded through a per-FlowId link array, and each level
// keeps a 256-bit map of its non-empty slots, so advance() jumps over idle stretches of time instead of
// stepping through empty ticks.
//
// Accuracy: a flow expires at the first advance() whose tick reaches ceil(deadline / tick), that is
// less than one tick after its deadline (plus however late the caller calls advance), never before it.
//
// Invariant: an armed flow's timer is processed no later than the tick ceil(deadline / tick). touch()
// keeps it because the clock never goes back (the deadline only grows); set_timeout() keeps it by moving
// the timer when the deadline shrinks.
//
// Costs: touch: one load and one store in the flow's 16-byte deadline record. arm, cancel, a shorter
// set_timeout: O(1) list splice plus a bitmap bit. advance: O(levels) per visited tick that has work,
// plus O(1) per popped timer (an expiry, a cascade or a lazy re-arm); `budget` counts popped timers.
// A flow touched continuously is popped about twice per timeout (once per level it cascades through,
// once per re-arm), not once per packet. Memory per flow: 28 bytes (16 deadline + timeout, 12 links),
// plus 4 bytes per slot and 32 bytes of bitmap per level.
// Concurrency: single thread.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "flowtrack/aging/aging_policy.hpp"
#include "flowtrack/aging/internal/flow_deadlines.hpp"
#include "flowtrack/table/huge_page_allocator.hpp"

namespace flowtrack {

struct TimerWheelConfig {
  Nanos tick = kNanosPerMilli;
  unsigned levels = 4;  // 1..7; the wheel reaches 256^levels ticks ahead (4 levels of 1 ms: 49 days)
  Nanos start = 0;      // the clock's value when the wheel starts turning
};

class TimerWheel {
 public:
  static constexpr std::string_view kName = "wheel";
  static constexpr bool kRemovesFromTable = false;
  static constexpr unsigned kSlotBits = 8;
  static constexpr unsigned kSlotsPerLevel = 1u << kSlotBits;
  static constexpr unsigned kMaxLevels = 7;

  // Throws std::invalid_argument for a tick outside 1..kMaxTimeout or levels outside 1..kMaxLevels.
  explicit TimerWheel(std::size_t capacity, TimerWheelConfig config = {});

  void arm(FlowId id, Nanos now, Nanos timeout);
  // arm() with the first deadline given: a timer carried over from a saved state (conn_tracker.hpp's
  // restore), `timeout` after each later packet.
  void arm_until(FlowId id, Nanos deadline, Nanos timeout);
  void touch(FlowId id, Nanos now) { deadlines_.touch(id, now); }
  // Brings what touch() and set_timeout() of `id` read towards the cache (its deadline, its link).
  void prefetch(FlowId id) const {
    deadlines_.prefetch(id);
    __builtin_prefetch(&links_[id]);
  }
  void set_timeout(FlowId id, Nanos now, Nanos timeout);
  void cancel(FlowId id);

  template <class OnExpire>
  std::size_t advance(Nanos now, std::size_t budget, OnExpire&& on_expire);

  bool armed(FlowId id) const { return links_[id].slot != kUnarmed; }
  Nanos deadline(FlowId id) const { return deadlines_.deadline(id); }
  std::size_t size() const { return armed_; }
  Nanos tick() const { return tick_; }
  std::size_t capacity() const { return deadlines_.capacity(); }
  std::size_t memory_bytes() const;

 private:
  static constexpr FlowId kEnd = kNoFlow;
  static constexpr std::uint32_t kUnarmed = ~std::uint32_t{0};

  struct Link {
    FlowId next = kEnd;
    FlowId prev = kEnd;               // kEnd for the first timer of a slot
    std::uint32_t slot = kUnarmed;    // level * 256 + index, or kUnarmed
  };
  using SlotMap = std::array<std::uint64_t, kSlotsPerLevel / 64>;

  // Puts the flow's timer into the slot that is processed next at or before its deadline's tick, taking
  // current_ as the wheel's position.
  void place(FlowId id);
  void unlink(FlowId id);
  // The highest level with a slot processed at `tick` (level l is processed at multiples of 256^l).
  unsigned top_level_at(std::uint64_t tick) const;
  std::uint32_t slot_at(unsigned level, std::uint64_t tick) const {
    return level * kSlotsPerLevel + static_cast<std::uint32_t>((tick >> (kSlotBits * level)) & (kSlotsPerLevel - 1));
  }
  // The first tick in [from, limit] at which some non-empty slot is processed, or limit + 1.
  std::uint64_t next_busy_tick(std::uint64_t from, std::uint64_t limit) const;

  Nanos tick_;
  unsigned levels_;
  FlowDeadlines deadlines_;
  HugePageVector<Link> links_;
  std::vector<FlowId> heads_;       // first timer of each slot, levels_ * 256
  std::vector<SlotMap> occupied_;   // per level: bit i set iff slot i is non-empty
  std::uint64_t current_;           // every slot due at a tick before current_ has been processed
  std::size_t armed_ = 0;
};

// Processes ticks up to now / tick, highest level first within a tick, so that a timer cascading down
// lands in a slot of a later tick (place() guarantees this) and is seen again in time. A call that runs
// out of budget stops inside a tick and resumes there: slots of that tick already emptied stay empty.
template <class OnExpire>
std::size_t TimerWheel::advance(Nanos now, std::size_t budget, OnExpire&& on_expire) {
  const std::uint64_t target = now / tick_;
  std::size_t expired = 0;
  while (current_ <= target) {
    for (unsigned level = top_level_at(current_) + 1; level-- > 0;) {
      const std::uint32_t slot = slot_at(level, current_);
      while (heads_[slot] != kEnd) {
        if (budget == 0) return expired;
        --budget;
        const FlowId id = heads_[slot];
        unlink(id);
        if (deadlines_.due(id, now)) {
          ++expired;
          on_expire(id);
        } else {
          place(id);
        }
      }
    }
    current_ = next_busy_tick(current_ + 1, target);
  }
  return expired;
}

}  // namespace flowtrack
