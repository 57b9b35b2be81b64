// Time in the scheduling layer: signed 64-bit picoseconds.
//
// The paper's costs are fractions of a microsecond (0.23 us per 64 bytes, 0.8 us per migration), so a
// whole number of picoseconds represents every one of them exactly enough, keeps the simulator's event
// order free of floating-point ties, and lasts 106 days before it overflows.
#pragma once

#include <cstdint>

namespace flowtrack {

using Picos = std::int64_t;

inline constexpr Picos kPicosPerMicro = 1'000'000;
inline constexpr Picos kPicosPerMilli = 1'000'000'000;
inline constexpr Picos kPicosPerSecond = 1'000'000'000'000;

constexpr Picos micros_to_picos(double micros) {
  return static_cast<Picos>(micros * static_cast<double>(kPicosPerMicro) + 0.5);
}
constexpr double picos_to_seconds(Picos t) { return static_cast<double>(t) / static_cast<double>(kPicosPerSecond); }

}  // namespace flowtrack
