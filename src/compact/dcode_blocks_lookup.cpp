#include "flowtrack/compact/dcode_blocks_lookup.hpp"

#include <algorithm>
#include <iterator>
#include <type_traits>

#include "flowtrack/compact/internal/prefetch_policy.hpp"
#include "flowtrack/compact/internal/version_stripes.hpp"
#include "flowtrack/util/assert.hpp"
#include "flowtrack/util/relaxed_atomic.hpp"

namespace flowtrack::compact {

DcodeBlocksLookup::DcodeBlocksLookup(unsigned dcode_bits) : geometry_(dcode_bits) {
  FLOWTRACK_ASSERT(dcode_bits >= 1 && dcode_bits <= 24, "a cell in one 8-byte load");
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
  std::uint64_t header[kChunk];
  for (std::size_t base = 0; base < queries.size(); base += kChunk) {
    const std::size_t n = std::min(kChunk, queries.size() - base);
    const LbQuery* q = queries.data() + base;
    std::uint32_t* out = dcodes.data() + base;
    const std::uint32_t generation = __atomic_load_n(&generation_, __ATOMIC_ACQUIRE);
    for (std::size_t i = 0; i < n; ++i) {
      const DcodeArrays& v = hot_[q[i].vip];
      h[i] = seeded_hash(q[i].key, v.seed);
      line[i] = v.lines + dcode_block_of(h[i], v.nblocks);
      if (prefetch) __builtin_prefetch(line[i]);
    }
    // The headers, in a pass of loads alone, so that the chunk's lines are all waited for at once. Read
    // in the cells' pass, each header heads ~40 instructions that need it, and the out-of-order window
    // held the misses of only a few keys: with the lines in DRAM (16M keys) 41 -> 54 Mqps; with them in
    // the L3 (4M) 72 -> 65 in the median, steadier (docs/performance/compact.md).
    std::uint64_t any_header = 0;
    for (std::size_t i = 0; i < n; ++i) {
      header[i] = load_relaxed(line[i]->words[0]);
      any_header |= header[i];
    }
    // Each key's Dcode from its line, now in the L1. Compiled with and without the rows' prefetches
    // (GCC kept the test on `rows` in the unrolled loop, with what it needs in registers spilled).
    auto read_lines = [&](auto prefetch_rows) {
#pragma GCC unroll 4
      for (std::size_t i = 0; i < n; ++i) {
        out[i] = dcode_from_line(*line[i], header[i], h[i], g);
        if constexpr (prefetch_rows) __builtin_prefetch(rows[base + i] + out[i]);
      }
    };
    if (rows.empty()) {
      read_lines(std::false_type{});
    } else {
      read_lines(std::true_type{});
    }
    // The keys of flagged blocks (rare): the overflow table's answer when it holds the key.
    if ((any_header & kDcodeBumped) != 0) {
      for (std::size_t i = 0; i < n; ++i) {
        if ((header[i] & kDcodeBumped) == 0) continue;
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

std::size_t DcodeBlocksLookup::bytes() const {
  std::size_t total = sizeof(*this) + hot_.size() * (sizeof(DcodeArrays) + sizeof(std::uint32_t)) +
                      images_.size() * sizeof(DcodeBlocksImage);
  for (const DcodeBlocksImage& image : images_) total += image.bytes();
  return total;
}

}  // namespace flowtrack::compact
