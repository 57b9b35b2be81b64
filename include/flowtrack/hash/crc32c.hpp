// CRC32C (Castagnoli, reflected polynomial 0x82F63B78): the per-packet table hash.
//
// With SSE4.2 it is one instruction per 8 bytes, so a FlowKeyV4 hashes in two steps. The portable
// table-driven version computes the same function and is always built, so the two can be compared.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {

// Continues a CRC32C register over `bytes` (no initial or final inversion: see crc32c()).
std::uint32_t crc32c_update_portable(std::uint32_t crc, std::span<const std::uint8_t> bytes);
std::uint32_t crc32c_update(std::uint32_t crc, std::span<const std::uint8_t> bytes);

// The standard CRC32C of a message (initial value and final xor 0xFFFFFFFF); "123456789" -> 0xE3069283.
inline std::uint32_t crc32c(std::span<const std::uint8_t> bytes) { return ~crc32c_update(~0u, bytes); }

inline std::uint32_t crc32c_u64(std::uint32_t crc, std::uint64_t word) {
#if defined(__SSE4_2__)
  return static_cast<std::uint32_t>(_mm_crc32_u64(crc, word));
#else
  std::uint8_t bytes[8];
  std::memcpy(bytes, &word, 8);
  return crc32c_update_portable(crc, bytes);
#endif
}

// The table hash of a key: CRC32C of its bytes from `seed`. Keys have zero padding, so whole words are
// hashed without masking.
inline std::uint32_t flow_hash(const FlowKeyV4& key, std::uint32_t seed = 0) {
  std::uint64_t words[2];
  std::memcpy(words, &key, sizeof(words));
  return crc32c_u64(crc32c_u64(seed, words[0]), words[1]);
}

inline std::uint32_t flow_hash(const FlowKeyV6& key, std::uint32_t seed = 0) {
  std::uint64_t words[5];
  std::memcpy(words, &key, sizeof(words));
  std::uint32_t crc = seed;
  for (std::uint64_t word : words) crc = crc32c_u64(crc, word);
  return crc;
}

// flow_hash as the hasher of a standard or abseil container of keys.
struct FlowKeyHasher {
  template <class Key>
  std::size_t operator()(const Key& key) const { return flow_hash(key); }
};

}  // namespace flowtrack
