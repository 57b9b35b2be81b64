// The first pass of ConcuryLookup's bulk lookups in AVX2 lanes, four keys a step
// (ConcuryLookup::hash_pass_avx2): each key's VIP record, its seeded hash, its two cells, their lines
// prefetched. It gives the scalar pass's cell bit addresses bit for bit (tests/compact/
// concury_bulk_paths_test.cpp), and the chunk's other passes (read the cells, then the row) are the
// scalar code for both paths. In lanes: the seeded hash's finaliser (hash/seeded_hash.hpp) with its
// 64-bit lane multiplies (mul64_lanes), othello_cells' multiply-high reductions, the cells' bit
// addresses and their lines.
//
// Only this pass is in lanes: the cells and the row are read by scalar loads, because AVX2 gathers
// measured slower here (AMD EPYC, family 25) than the scalar loads they replace
// (docs/performance/compact.md). Concurrency as in the scalar pass: the seed is a relaxed scalar load; the rest of a VIP's
// record read here changes only with no reader inside. The functions carry the target attribute so
// that the file builds for any x86-64; ConcuryLookup calls them only where the CPU has AVX2.
#include <immintrin.h>

#include <cstddef>
#include <cstring>

#include "flowtrack/compact/concury_lookup.hpp"
#include "flowtrack/util/relaxed_atomic.hpp"

namespace flowtrack::compact {

static_assert(sizeof(LbQuery) == 16 && offsetof(LbQuery, key) == 8, "two queries a 32-byte load, keys in the high halves");

namespace {

// x * c in every 64-bit lane, modulo 2^64. A build for a CPU with AVX-512DQ and VL (-march=native on
// one) has the lane multiply (one instruction: 1.87x -> 2.08x the Maglev-style table at 1K
// connections, medians of three alternating rounds, docs/performance/compact.md); AVX2 alone
// makes it of three 32x32->64 products, lo(x)lo(c) + (hi(x)lo(c) + lo(x)hi(c)) * 2^32. The release
// tree tests the form its CPU has, the ASan tree (x86-64-v3, Makefile) the AVX2 one.
__attribute__((target("avx2"))) inline __m256i mul64_lanes(__m256i x, std::uint64_t c) {
#if defined(__AVX512DQ__) && defined(__AVX512VL__)
  return _mm256_mullo_epi64(x, _mm256_set1_epi64x(static_cast<long long>(c)));
#else
  const __m256i c_lo = _mm256_set1_epi64x(static_cast<long long>(c));  // products take each lane's low half
  const __m256i c_hi = _mm256_set1_epi64x(static_cast<long long>(c >> 32));
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), c_lo), _mm256_mul_epu32(x, c_hi));
  return _mm256_add_epi64(_mm256_mul_epu32(x, c_lo), _mm256_slli_epi64(cross, 32));
#endif
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

}  // namespace

__attribute__((target("avx2"))) std::size_t ConcuryLookup::hash_pass_avx2(const LbQuery* q, std::size_t n,
                                                                           ChunkCells& out) const {
  static_assert(offsetof(Hot, cells) == 0 && offsetof(Hot, size_a) == 8 && offsetof(Hot, size_b) == 12,
                "a record's first 16 bytes: cells, size_a, size_b");
  const std::size_t in_lanes = n - n % 4;
  const __m256i width = _mm256_set1_epi64x(dcode_bits_);
  const __m256i low_halves = _mm256_set1_epi64x(0xffffffff);
  const Hot* hot = hot_.data();  // read once: the stores to `out` below might alias it for the compiler
  for (std::size_t i = 0; i < in_lanes; i += 4) {
    const Hot* vip[4] = {hot + q[i].vip, hot + q[i + 1].vip, hot + q[i + 2].vip, hot + q[i + 3].vip};
    // Each record's first 16 bytes are its cells' address and its two sizes; records 0 and 2, 1 and 3
    // in a register, then the cells' addresses and the sizes (size_a low, size_b high) in lanes. The
    // rows' addresses go to `out` by scalar moves, and only the seeds (relaxed atomic loads) move from
    // scalar registers into lanes: such moves, and lanes taken back out for the prefetches, bounded
    // this loop on AMD when it made 16 of them for 4 keys (llvm-mca, znver3: 8.2 -> 5.0 cycles a key).
    auto head = [&](int k) { return _mm_load_si128(reinterpret_cast<const __m128i*>(vip[k])); };
    const __m256i heads02 = _mm256_inserti128_si256(_mm256_castsi128_si256(head(0)), head(2), 1);
    const __m256i heads13 = _mm256_inserti128_si256(_mm256_castsi128_si256(head(1)), head(3), 1);
    const __m256i cells = _mm256_unpacklo_epi64(heads02, heads13);
    const __m256i size_ab = _mm256_unpackhi_epi64(heads02, heads13);
    // A scalar move each (written out: as a loop, the compiler keeps `vip` on the stack).
    store_relaxed(out.row[i], vip[0]->dips);
    store_relaxed(out.row[i + 1], vip[1]->dips);
    store_relaxed(out.row[i + 2], vip[2]->dips);
    store_relaxed(out.row[i + 3], vip[3]->dips);
    auto seed = [&](int k) { return static_cast<long long>(load_relaxed(vip[k]->seed)); };
    const __m256i seeds = _mm256_set_epi64x(seed(3), seed(2), seed(1), seed(0));
    // Keys 0, 2, 1, 3 from two loads of two queries each, then in order.
    const __m256i queries01 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + i));
    const __m256i queries23 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + i + 2));
    const __m256i keys = _mm256_permute4x64_epi64(_mm256_unpackhi_epi64(queries01, queries23), 0xd8);

    // othello_cells: a = reduce(low half, size_a), b = size_a + reduce(high half, size_b).
    const __m256i h = seeded_hash_lanes(keys, seeds);
    const __m256i a = _mm256_srli_epi64(_mm256_mul_epu32(h, size_ab), 32);
    const __m256i b = _mm256_add_epi64(_mm256_and_si256(size_ab, low_halves),
                                       _mm256_srli_epi64(_mm256_mul_epu32(_mm256_srli_epi64(h, 32), _mm256_srli_epi64(size_ab, 32)), 32));
    // Bit addresses (PackedCells::bit_address).
    const __m256i cells_bit = _mm256_slli_epi64(cells, 3);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.a + i), _mm256_add_epi64(cells_bit, _mm256_mul_epu32(a, width)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.b + i), _mm256_add_epi64(cells_bit, _mm256_mul_epu32(b, width)));
  }
  // The cells' lines, by scalar code reading the addresses back (see above), when they are worth it.
  for (std::size_t i = 0; prefetch_ && i < in_lanes; ++i) {
    __builtin_prefetch(PackedCells::byte_at(out.a[i]));
    __builtin_prefetch(PackedCells::byte_at(out.b[i]));
  }
  return in_lanes;
}

}  // namespace flowtrack::compact
