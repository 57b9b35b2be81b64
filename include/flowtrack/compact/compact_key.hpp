// The keys the compact structures accept and the hashing they share.
//
// Two key types: FlowKeyV4 (a full 5-tuple, 16 bytes with zero padding) and a 64-bit integer (Concury's
// 4-tuple: source address, source port, destination port, protocol packed in one word). Every structure
// hashes a key with the seeded family of hash/seeded_hash.hpp, and splits one 64-bit hash into two 32-bit
// halves when it needs two indices (the two halves are independent enough for two array positions).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>

#include "flowtrack/hash/seeded_hash.hpp"
#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack::compact {

template <class Key>
concept CompactKey = std::same_as<Key, std::uint64_t> || std::same_as<Key, FlowKeyV4>;

// Maps a 32-bit hash onto [0, range) by multiply-high (no division; uniform enough for our ranges).
inline std::uint32_t reduce(std::uint32_t hash, std::uint32_t range) {
  return static_cast<std::uint32_t>((std::uint64_t{hash} * range) >> 32);
}

inline std::uint32_t low_half(std::uint64_t h) { return static_cast<std::uint32_t>(h); }
inline std::uint32_t high_half(std::uint64_t h) { return static_cast<std::uint32_t>(h >> 32); }

// For the control planes' std::unordered_map / unordered_set of full keys.
struct KeyHasher {
  template <CompactKey Key>
  std::size_t operator()(const Key& key) const {
    return seeded_hash(key, 0x5eed0f00dull);
  }
};

}  // namespace flowtrack::compact
