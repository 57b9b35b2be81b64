#include "flowtrack/compact/dcode_blocks_lookup.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <type_traits>

#include "flowtrack/compact/prefetch_policy.hpp"
#include "flowtrack/compact/version_stripes.hpp"
#include "flowtrack/util/assert.hpp"
#include "flowtrack/util/relaxed_atomic.hpp"
#include "seeded_hash_lanes.hpp"

namespace flowtrack::compact {

DcodeBlocksLookup::DcodeBlocksLookup(unsigned dcode_bits) : geometry_(dcode_bits), avx2_(__builtin_cpu_supports("avx2")) {
  FLOWTRACK_ASSERT(dcode_bits >= 1 && dcode_bits <= 24, "a cell in one 8-byte load");
}

void DcodeBlocksLookup::set_avx2(bool on) {
  FLOWTRACK_ASSERT(!on || __builtin_cpu_supports("avx2"), "AVX2 only where the CPU has it");
  avx2_ = on;
}

void DcodeBlocksLookup::decide_prefetch() {
  std::size_t line_bytes = 0;
  for (const DcodeBlocksImage& image : images_) line_bytes += image.lines.size() * sizeof(DcodeLine);
  prefetch_ = prefetch_pays(line_bytes);
}

std::uint32_t DcodeBlocksLookup::add_vip(const DcodeBlocksImage& image) {
  FLOWTRACK_ASSERT(image.dcode_bits == geometry_.bits, "one Dcode width for every VIP");
  images_.push_back(image);
  // If images_ moved, the other VIPs' arrays did not (a moved vector keeps its buffer): their entries
  // in hot_ still hold.
  hot_.push_back(images_.back().arrays());
  epochs_.push_back(0);
  decide_prefetch();
  return static_cast<std::uint32_t>(images_.size() - 1);
}

void DcodeBlocksLookup::apply(std::uint32_t vip, const DcodeBlocksImage& image) {
  FLOWTRACK_ASSERT(image.dcode_bits == geometry_.bits, "one Dcode width for every VIP");
  DcodeBlocksImage& own = images_[vip];
  if (!own.same_geometry(image)) {
    // Another geometry: the caller guarantees no reader is inside (see the header).
    own = image;
    hot_[vip] = own.arrays();
    decide_prefetch();
    return;
  }
  const InPlaceRewrite section(epochs_[vip], generation_);
  for (std::size_t b = 0; b < own.lines.size(); ++b) {
    for (std::size_t w = 0; w < std::size(own.lines[b].words); ++w) store_relaxed(own.lines[b].words[w], image.lines[b].words[w]);
  }
  for (std::size_t s = 0; s < own.overflow.size(); ++s) {
    store_relaxed(own.overflow[s].key, image.overflow[s].key);
    store_relaxed(own.overflow[s].code, image.overflow[s].code);
  }
}

std::uint32_t DcodeBlocksLookup::lookup(std::uint32_t vip, std::uint64_t key) const {
  for (;;) {
    const std::uint32_t epoch = __atomic_load_n(&epochs_[vip], __ATOMIC_ACQUIRE);
    if ((epoch & 1) != 0) continue;
    const std::uint32_t code = dcode_of(hot_[vip], key, geometry_);
    stripes_fence(std::memory_order_acquire);
    if (load_relaxed(epochs_[vip]) == epoch) return code;
  }
}

void DcodeBlocksLookup::lookup_bulk(std::span<const LbQuery> queries, std::span<std::uint32_t> dcodes,
                                    std::span<const std::uint16_t* const> rows) const {
  if (geometry_.bits == DefaultGeometry::get().bits) {
    bulk(queries, dcodes, rows, DefaultGeometry{});
  } else {
    bulk(queries, dcodes, rows, RuntimeGeometry{geometry_});
  }
}

template <class Geometry>
void DcodeBlocksLookup::bulk(std::span<const LbQuery> queries, std::span<std::uint32_t> dcodes,
                             std::span<const std::uint16_t* const> rows, Geometry geometry) const {
  const DcodeGeometry g = geometry.get();
  const bool prefetch = prefetch_;
  std::uint64_t h[kChunk];
  const DcodeLine* line[kChunk];
  for (std::size_t base = 0; base < queries.size(); base += kChunk) {
    const std::size_t n = std::min(kChunk, queries.size() - base);
    const LbQuery* q = queries.data() + base;
    std::uint32_t* out = dcodes.data() + base;
    const std::uint32_t generation = __atomic_load_n(&generation_, __ATOMIC_ACQUIRE);
    for (std::size_t i = avx2_ ? hash_pass_avx2(q, n, h, line) : 0; i < n; ++i) {
      const DcodeArrays& v = hot_[q[i].vip];
      h[i] = seeded_hash(q[i].key, v.seed);
      line[i] = v.lines + dcode_block_of(h[i], v.nblocks);
      if (prefetch) __builtin_prefetch(line[i]);
    }
    // Each key's Dcode from its line; returns the headers or-ed together: whether any key's block is
    // flagged. Compiled with and without the rows' prefetches (GCC kept the test on `rows` in the
    // unrolled loop, with what it needs in registers spilled).
    auto read_lines = [&](auto prefetch_rows) {
      std::uint64_t any_header = 0;
#pragma GCC unroll 4
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t header = load_relaxed(line[i]->words[0]);
        out[i] = dcode_from_line(*line[i], header, h[i], g);
        if constexpr (prefetch_rows) __builtin_prefetch(rows[base + i] + out[i]);
        any_header |= header;
      }
      return any_header;
    };
    const std::uint64_t any_header = rows.empty() ? read_lines(std::false_type{}) : read_lines(std::true_type{});
    // The keys of flagged blocks (rare): the overflow table's answer when it holds the key.
    if ((any_header & kDcodeBumped) != 0) {
      for (std::size_t i = 0; i < n; ++i) {
        if ((load_relaxed(line[i]->words[0]) & kDcodeBumped) == 0) continue;
        const DcodeArrays& v = hot_[q[i].vip];
        if (const auto code = dcode_overflow_find(v.overflow, v.overflow_mask, q[i].key, h[i])) out[i] = *code;
      }
    }
    stripes_fence(std::memory_order_acquire);
    // A rewrite of some VIP raced with the chunk (rare): read the chunk again key by key.
    if (((generation & 1) | (load_relaxed(generation_) ^ generation)) != 0) {
      for (std::size_t i = 0; i < n; ++i) out[i] = lookup(q[i].vip, q[i].key);
    }
  }
}

// The first pass in lanes (seeded_hash_lanes.hpp). The VIPs' records are read by vector loads: what
// this pass reads of them (lines, seed, nblocks) changes only with no reader inside. The lines'
// prefetches are scalar, reading back the addresses just stored (extracting lanes costs more, as in
// concury_lookup_avx2.cpp), four at each step: issued after the whole pass, the first lines had less
// time to arrive before the second pass read them (1M-16M connections: 0.1-0.3x less of the ratio to
// Maglev than the scalar pass, which prefetches as it goes).
__attribute__((target("avx2"))) std::size_t DcodeBlocksLookup::hash_pass_avx2(const LbQuery* q, std::size_t n, std::uint64_t* h,
                                                                               const DcodeLine** line) const {
  static_assert(sizeof(DcodeArrays) == 32 && offsetof(DcodeArrays, lines) == 0 && offsetof(DcodeArrays, seed) == 16 &&
                    offsetof(DcodeArrays, nblocks) == 24,
                "a record a 32-byte load: lines, overflow | seed, nblocks and overflow_mask");
  static_assert(sizeof(DcodeLine*) == 8 && sizeof(DcodeLine) == 64, "a line's address in a 64-bit lane, blocks 64 bytes apart");
  const std::size_t in_lanes = n - n % 4;
  const DcodeArrays* hot = hot_.data();  // read once: the stores to h and line below might alias it for the compiler
  const bool prefetch = prefetch_;
  for (std::size_t i = 0; i < in_lanes; i += 4) {
    auto record = [&](std::size_t k) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hot + q[i + k].vip)); };
    const __m256i r0 = record(0), r1 = record(1), r2 = record(2), r3 = record(3);
    // Records k and k + 1 interleaved: (lines k, lines k + 1 | seed k, seed k + 1) and (overflow k,
    // overflow k + 1 | sizes k, sizes k + 1), sizes being nblocks in the low half, overflow_mask high.
    const __m256i lo01 = _mm256_unpacklo_epi64(r0, r1), lo23 = _mm256_unpacklo_epi64(r2, r3);
    const __m256i hi01 = _mm256_unpackhi_epi64(r0, r1), hi23 = _mm256_unpackhi_epi64(r2, r3);
    const __m256i lines = _mm256_permute2x128_si256(lo01, lo23, 0x20);
    const __m256i seeds = _mm256_permute2x128_si256(lo01, lo23, 0x31);
    const __m256i sizes = _mm256_permute2x128_si256(hi01, hi23, 0x31);
    const __m256i hashes = lanes::seeded_hash_lanes(lanes::query_keys(q + i), seeds);
    // dcode_block_of: reduce(low half of h, nblocks), a multiply of the lanes' low halves.
    const __m256i blocks = _mm256_srli_epi64(_mm256_mul_epu32(hashes, sizes), 32);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(h + i), hashes);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(line + i), _mm256_add_epi64(lines, _mm256_slli_epi64(blocks, 6)));
    if (prefetch) {
      __builtin_prefetch(line[i]);
      __builtin_prefetch(line[i + 1]);
      __builtin_prefetch(line[i + 2]);
      __builtin_prefetch(line[i + 3]);
    }
  }
  return in_lanes;
}

std::size_t DcodeBlocksLookup::bytes() const {
  std::size_t total = sizeof(*this) + hot_.size() * (sizeof(DcodeArrays) + sizeof(std::uint32_t)) +
                      images_.size() * sizeof(DcodeBlocksImage);
  for (const DcodeBlocksImage& image : images_) total += image.bytes();
  return total;
}

}  // namespace flowtrack::compact
