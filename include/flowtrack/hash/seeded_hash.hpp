// A family of 64-bit hash functions indexed by a seed, for the compact structures (Othello, Ludo) that
// need several independent-looking hashes of one key and re-seed when a construction fails.
//
// Each 8-byte word is folded into the state with a multiply and a rotate; the state starts from the
// seed and the length, and ends in a two-round xor-shift-multiply finaliser, so every output bit depends
// on every input and seed bit. A single 64-bit word goes through the finaliser alone. Not cryptographic.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>

#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {

namespace seeded_hash_detail {
inline constexpr std::uint64_t kMulA = 0x9fb21c651e98df25ull;
inline constexpr std::uint64_t kMulB = 0xc2b2ae3d27d4eb4full;
// The finaliser's three xor-shifts, in order (a vector copy of it, compact/concury_lookup_avx2.cpp,
// takes the same constants).
inline constexpr int kShift1 = 31, kShift2 = 29, kShift3 = 32;

constexpr std::uint64_t finalise(std::uint64_t x) {
  x ^= x >> kShift1;
  x *= kMulA;
  x ^= x >> kShift2;
  x *= kMulB;
  x ^= x >> kShift3;
  return x;
}

constexpr std::uint64_t absorb(std::uint64_t state, std::uint64_t word) {
  return std::rotl((state ^ word) * kMulB, 27) * kMulA;
}
}  // namespace seeded_hash_detail

// One word: the finaliser alone (two multiplies) mixes it fully; the absorb round that longer inputs
// need between words adds nothing here but two multiplies on every compact lookup.
inline std::uint64_t seeded_hash(std::uint64_t value, std::uint64_t seed) {
  using namespace seeded_hash_detail;
  return finalise(seed ^ kMulA ^ value);
}

inline std::uint64_t seeded_hash(std::span<const std::uint8_t> bytes, std::uint64_t seed) {
  using namespace seeded_hash_detail;
  std::uint64_t state = seed ^ (bytes.size() * kMulB);
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    state = absorb(state, word);
  }
  if (i < bytes.size()) {
    std::uint64_t tail = 0;
    std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
    state = absorb(state, tail);
  }
  return finalise(state);
}

template <class Key>
  requires std::same_as<Key, FlowKeyV4> || std::same_as<Key, FlowKeyV6>
inline std::uint64_t seeded_hash(const Key& key, std::uint64_t seed) {
  return seeded_hash(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(&key), sizeof(Key)), seed);
}

}  // namespace flowtrack
