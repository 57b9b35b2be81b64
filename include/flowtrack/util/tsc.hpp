// Time in TSC cycles: how every benchmark measures. The reads are fenced so the measured work cannot
// drift across them; the frequency is calibrated once against the steady clock.
#pragma once

#include <x86intrin.h>

#include <chrono>
#include <cstdint>

namespace flowtrack {

inline std::uint64_t tsc_begin() {
  _mm_lfence();
  const std::uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

inline std::uint64_t tsc_end() {
  unsigned aux;
  const std::uint64_t t = __rdtscp(&aux);
  _mm_lfence();
  return t;
}

// TSC ticks per second, measured over ~5 ms the first time it is asked: each end of the interval is
// read to within ~50 ns, so the error stays near 1e-5, and a short command does not wait 50 ms for it.
inline double tsc_hz() {
  static const double hz = [] {
    const auto wall_start = std::chrono::steady_clock::now();
    const std::uint64_t start = tsc_begin();
    while (std::chrono::steady_clock::now() - wall_start < std::chrono::milliseconds(5)) {
    }
    const std::uint64_t stop = tsc_end();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return static_cast<double>(stop - start) / seconds;
  }();
  return hz;
}

}  // namespace flowtrack
