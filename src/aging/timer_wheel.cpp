#include "flowtrack/aging/timer_wheel.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace flowtrack {

namespace {

// The index of the first set bit of `map` at or cyclically after `from`, or -1 if the map is empty.
int first_set_from(const std::array<std::uint64_t, 4>& map, unsigned from) {
  const unsigned word = from / 64;
  const unsigned bit = from % 64;
  // The first word is looked at twice: its bits at or after `from` first, its bits before `from` last.
  if (const std::uint64_t high = map[word] & (~std::uint64_t{0} << bit); high != 0) {
    return static_cast<int>(word * 64 + std::countr_zero(high));
  }
  for (unsigned step = 1; step < 4; ++step) {
    const unsigned w = (word + step) % 4;
    if (map[w] != 0) return static_cast<int>(w * 64 + std::countr_zero(map[w]));
  }
  if (const std::uint64_t low = map[word] & ~(~std::uint64_t{0} << bit); low != 0) {
    return static_cast<int>(word * 64 + std::countr_zero(low));
  }
  return -1;
}

}  // namespace

TimerWheel::TimerWheel(std::size_t capacity, TimerWheelConfig config)
    : tick_(config.tick),
      levels_(config.levels),
      deadlines_(capacity),
      links_(capacity),
      heads_(std::size_t{config.levels} * kSlotsPerLevel, kEnd),
      occupied_(config.levels, SlotMap{}),
      current_(config.tick == 0 ? 0 : config.start / config.tick) {
  if (config.tick == 0 || config.tick > kMaxTimeout) {
    throw std::invalid_argument("timer wheel: tick must be in 1..kMaxTimeout ns");
  }
  if (config.levels == 0 || config.levels > kMaxLevels) {
    throw std::invalid_argument("timer wheel: levels must be in 1..7");
  }
}

void TimerWheel::arm(FlowId id, Nanos now, Nanos timeout) {
  if (armed(id)) unlink(id);
  deadlines_.restart(id, now, timeout);
  place(id);
}

void TimerWheel::arm_until(FlowId id, Nanos deadline, Nanos timeout) {
  if (armed(id)) unlink(id);
  deadlines_.restart_until(id, deadline, timeout);
  place(id);
}

void TimerWheel::set_timeout(FlowId id, Nanos now, Nanos timeout) {
  if (!armed(id)) return;
  const Nanos before = deadlines_.deadline(id);
  deadlines_.restart(id, now, timeout);
  // A later deadline is handled by lazy re-arm; an earlier one needs the timer moved forward in time.
  if (deadlines_.deadline(id) < before) {
    unlink(id);
    place(id);
  }
}

void TimerWheel::cancel(FlowId id) {
  if (armed(id)) unlink(id);
  deadlines_.forget(id);
}

// With the wheel at tick c and the timer due at tick e >= c, let d = e - c and l the level with
// 256^l <= d < 256^(l+1) (level 0 for d < 256). Level l slot s is processed at ticks k * 256^l with
// k % 256 == s; the first such k after c / 256^l lies in (c / 256^l, c / 256^l + 256], and the bounds on d
// put e / 256^l in that same window, so the slot is next processed at (e / 256^l) * 256^l: after c (so
// never in a slot the current tick has already emptied, nor in the one being emptied), and at or
// before e. A timer beyond the top level's reach is placed as if due at the last tick in reach.
void TimerWheel::place(FlowId id) {
  const std::uint64_t due_tick = std::max(current_, (deadlines_.deadline(id) + tick_ - 1) / tick_);
  std::uint64_t distance = due_tick - current_;
  unsigned level = distance == 0 ? 0 : (static_cast<unsigned>(std::bit_width(distance)) - 1) / kSlotBits;
  if (level >= levels_) {
    level = levels_ - 1;
    distance = (std::uint64_t{1} << (kSlotBits * levels_)) - 1;
  }
  const std::uint32_t slot = slot_at(level, current_ + distance);
  Link& link = links_[id];
  link = {heads_[slot], kEnd, slot};
  if (link.next != kEnd) {
    links_[link.next].prev = id;
  } else {
    occupied_[level][(slot % kSlotsPerLevel) / 64] |= std::uint64_t{1} << (slot % 64);
  }
  heads_[slot] = id;
  ++armed_;
}

void TimerWheel::unlink(FlowId id) {
  Link& link = links_[id];
  if (link.prev != kEnd) {
    links_[link.prev].next = link.next;
  } else {
    heads_[link.slot] = link.next;
    if (link.next == kEnd) {
      occupied_[link.slot / kSlotsPerLevel][(link.slot % kSlotsPerLevel) / 64] &= ~(std::uint64_t{1} << (link.slot % 64));
    }
  }
  if (link.next != kEnd) links_[link.next].prev = link.prev;
  link = Link{};
  --armed_;
}

unsigned TimerWheel::top_level_at(std::uint64_t tick) const {
  // tick 0 is a multiple of everything; otherwise the trailing zero bits say which levels are due.
  const unsigned by_alignment = tick == 0 ? levels_ - 1 : static_cast<unsigned>(std::countr_zero(tick)) / kSlotBits;
  return std::min(by_alignment, levels_ - 1);
}

std::uint64_t TimerWheel::next_busy_tick(std::uint64_t from, std::uint64_t limit) const {
  std::uint64_t best = limit + 1;
  for (unsigned level = 0; level < levels_; ++level) {
    const unsigned shift = kSlotBits * level;
    // The level's slots are processed at multiples of 256^level: the first candidate is from rounded up.
    const std::uint64_t first = (from + ((std::uint64_t{1} << shift) - 1)) >> shift;
    const int index = first_set_from(occupied_[level], static_cast<unsigned>(first % kSlotsPerLevel));
    if (index < 0) continue;
    const std::uint64_t steps = (static_cast<unsigned>(index) - first) % kSlotsPerLevel;
    best = std::min(best, (first + steps) << shift);
  }
  return best;
}

std::size_t TimerWheel::memory_bytes() const {
  return sizeof(*this) + deadlines_.memory_bytes() + links_.capacity() * sizeof(Link) +
         heads_.capacity() * sizeof(FlowId) + occupied_.capacity() * sizeof(SlotMap);
}

}  // namespace flowtrack
