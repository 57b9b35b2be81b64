// Time in the data plane: nanoseconds in a uint64 (Nanos), from one of two clocks with the same shape.
//
// TscClock is the data-plane clock: the runtime reads it once per burst and passes that `now` to every
// aging call of the burst, so a packet never pays for a clock read. It converts TSC cycles to
// nanoseconds since the clock's construction with one 64x64->128 multiply and a shift (fixed point,
// 32 fractional bits), calibrated once by util/tsc.hpp. FakeClock is the test clock: it moves only when
// told, so aging tests run in milliseconds and are exactly reproducible.
//
// Every aging policy (aging/aging_policy.hpp) relies on `now` never decreasing between calls and staying
// below kMaxTime (146 years after the clock's epoch), which is what lets a deadline be computed as
// now + timeout without checking for overflow (timeouts are clamped to kMaxTimeout).
#pragma once

#include <cstdint>

#include "flowtrack/util/tsc.hpp"

namespace flowtrack {

using Nanos = std::uint64_t;

inline constexpr Nanos kNanosPerMicro = 1'000;
inline constexpr Nanos kNanosPerMilli = 1'000'000;
inline constexpr Nanos kNanosPerSecond = 1'000'000'000;

// The latest `now` any policy accepts, and the longest timeout: their sum still fits in a Nanos.
inline constexpr Nanos kMaxTime = Nanos{1} << 62;
inline constexpr Nanos kMaxTimeout = Nanos{1} << 62;
// A deadline no `now` reaches: what a flow without a pending expiry carries.
inline constexpr Nanos kNever = ~Nanos{0};

class TscClock {
 public:
  TscClock() : epoch_(tsc_begin()), nanos_per_cycle_q32_(static_cast<std::uint64_t>(1e9 / tsc_hz() * 4294967296.0)) {}

  Nanos now() const {
    const std::uint64_t cycles = tsc_begin() - epoch_;
    return static_cast<Nanos>((static_cast<unsigned __int128>(cycles) * nanos_per_cycle_q32_) >> 32);
  }

 private:
  std::uint64_t epoch_;
  std::uint64_t nanos_per_cycle_q32_;  // nanoseconds per TSC cycle, times 2^32
};

class FakeClock {
 public:
  explicit FakeClock(Nanos start = 0) : now_(start) {}

  Nanos now() const { return now_; }
  void advance(Nanos by) { now_ += by; }

 private:
  Nanos now_;
};

}  // namespace flowtrack
