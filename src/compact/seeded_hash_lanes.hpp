// The AVX2 lanes shared by the first passes of Concury's bulk lookups in both layouts
// (concury_lookup_avx2.cpp, dcode_blocks_lookup.cpp): four queries' keys in the four 64-bit lanes of a
// register, and seeded_hash (hash/seeded_hash.hpp) of one 64-bit word in every lane, seeded_hash's
// result bit for bit: the same finaliser, with its 64-bit multiplies as three 32x32->64 lane products
// each (AVX2 has no 64-bit lane multiply).
// The functions carry the target attribute so that their files build for any x86-64; callers run them
// only where the CPU has AVX2.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "flowtrack/compact/lb_query.hpp"
#include "flowtrack/hash/seeded_hash.hpp"

namespace flowtrack::compact::lanes {

static_assert(sizeof(LbQuery) == 16 && offsetof(LbQuery, key) == 8, "two queries a 32-byte load, keys in the high halves");

// The keys of q[0..3], in order: keys 0, 2, 1, 3 from two loads of two queries each, then permuted.
__attribute__((target("avx2"))) inline __m256i query_keys(const LbQuery* q) {
  const __m256i queries01 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
  const __m256i queries23 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 2));
  return _mm256_permute4x64_epi64(_mm256_unpackhi_epi64(queries01, queries23), 0xd8);
}

// x * c in every 64-bit lane, modulo 2^64: lo(x)lo(c) + (hi(x)lo(c) + lo(x)hi(c)) * 2^32.
__attribute__((target("avx2"))) inline __m256i mul64_lanes(__m256i x, std::uint64_t c) {
  const __m256i c_lo = _mm256_set1_epi64x(static_cast<long long>(c));  // products take each lane's low half
  const __m256i c_hi = _mm256_set1_epi64x(static_cast<long long>(c >> 32));
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), c_lo), _mm256_mul_epu32(x, c_hi));
  return _mm256_add_epi64(_mm256_mul_epu32(x, c_lo), _mm256_slli_epi64(cross, 32));
}

template <int kShift>
__attribute__((target("avx2"))) inline __m256i xor_shift_lanes(__m256i x) {
  return _mm256_xor_si256(x, _mm256_srli_epi64(x, kShift));
}

// seeded_hash(key, seed) of one 64-bit word, in every lane.
__attribute__((target("avx2"))) inline __m256i seeded_hash_lanes(__m256i keys, __m256i seeds) {
  using namespace seeded_hash_detail;
  __m256i x = _mm256_xor_si256(_mm256_xor_si256(seeds, _mm256_set1_epi64x(static_cast<long long>(kMulA))), keys);
  x = mul64_lanes(xor_shift_lanes<kShift1>(x), kMulA);
  x = mul64_lanes(xor_shift_lanes<kShift2>(x), kMulB);
  return xor_shift_lanes<kShift3>(x);
}

}  // namespace flowtrack::compact::lanes
