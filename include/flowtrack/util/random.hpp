// A small, fast, seedable generator whose output is the same on every platform and library version
// (std::*_distribution is not), so a synthetic trace is a pure function of its seed.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace flowtrack {

// xoshiro256** state, seeded through splitmix64 so that nearby seeds give unrelated streams.
class Random {
 public:
  explicit Random(std::uint64_t seed) {
    for (auto& word : state_) {
      seed += 0x9e3779b97f4a7c15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      word = z ^ (z >> 31);
    }
  }

  std::uint64_t next() {
    const std::uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = std::rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, bound) (bound > 0), by the multiply-high method (negligible bias for our bounds).
  std::uint64_t below(std::uint64_t bound) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
  }

  // Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  bool chance(double probability) { return unit() < probability; }

  // Exponential with the given mean.
  double exponential(double mean) { return -mean * std::log1p(-unit()); }

  // Pareto with minimum `scale` and tail index `shape` (> 1 for a finite mean).
  double pareto(double scale, double shape) { return scale / std::pow(1.0 - unit(), 1.0 / shape); }

 private:
  std::uint64_t state_[4];
};

}  // namespace flowtrack
