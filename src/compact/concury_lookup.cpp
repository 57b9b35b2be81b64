#include "flowtrack/compact/concury_lookup.hpp"

#include <algorithm>

#include "flowtrack/compact/internal/prefetch_policy.hpp"
#include "flowtrack/compact/internal/version_stripes.hpp"
#include "flowtrack/util/assert.hpp"
#include "flowtrack/util/relaxed_atomic.hpp"

namespace flowtrack::compact {

namespace {
constexpr unsigned kDefaultDcodeBits = 12;  // the thesis's Dcode width: the hot path's constant
}  // namespace

ConcuryLookup::ConcuryLookup(unsigned dcode_bits, ConcuryLayout layout)
    : dcode_bits_(dcode_bits), avx2_(avx2_supported()),
      blocks_(layout == ConcuryLayout::blocks ? std::make_unique<DcodeBlocksLookup>(dcode_bits) : nullptr) {
  FLOWTRACK_ASSERT(dcode_bits >= 1 && dcode_bits <= 24, "a row of 2^dcode_bits entries; cells read by one 8-byte load");
}

bool ConcuryLookup::avx2_supported() { return __builtin_cpu_supports("avx2"); }

void ConcuryLookup::set_bulk_path(BulkPath path) {
  FLOWTRACK_ASSERT(path == BulkPath::scalar || avx2_supported(), "AVX2 only where the CPU has it");
  avx2_ = path == BulkPath::avx2;
}

void ConcuryLookup::check(const ConcuryVipImage& image) const {
  if (blocks_) {
    FLOWTRACK_ASSERT(std::get<DcodeBlocksImage>(image.codes).dcode_bits == dcode_bits_, "cells are Dcodes alone");
  } else {
    [[maybe_unused]] const OthelloShape& s = std::get<OthelloImage>(image.codes).shape;
    FLOWTRACK_ASSERT(s.value_bits == dcode_bits_ && s.fingerprint_bits == 0 && !s.emptiness, "cells are Dcodes alone");
  }
  FLOWTRACK_ASSERT(image.dips.size() == (std::size_t{1} << dcode_bits_), "a row entry per Dcode");
}

void ConcuryLookup::point(std::uint32_t vip) {
  const Owned& o = owned_[vip];
  hot_[vip] = {o.cells.words().data(), o.shape.size_a, o.shape.size_b, o.dips.data(), o.shape.seed};
}

void ConcuryLookup::decide_prefetch() {
  std::size_t cell_bytes = blocks_ ? blocks_->bytes() : 0;
  for (const Owned& v : owned_) cell_bytes += v.cells.bytes();
  prefetch_ = prefetch_pays(cell_bytes);
}

std::uint32_t ConcuryLookup::add_vip(const ConcuryVipImage& image) {
  check(image);
  if (blocks_) {
    blocks_->add_vip(std::get<DcodeBlocksImage>(image.codes));
    owned_.push_back({{}, {}, image.dips});
  } else {
    const OthelloImage& codes = std::get<OthelloImage>(image.codes);
    owned_.push_back({codes.shape, codes.cells, image.dips});
  }
  hot_.resize(owned_.size());
  epochs_.resize(owned_.size(), 0);
  // owned_ may have moved: the arrays did not (moved vectors keep their buffers), but point again anyway.
  for (std::uint32_t v = 0; v < owned_.size(); ++v) point(v);
  decide_prefetch();
  return static_cast<std::uint32_t>(owned_.size() - 1);
}

void ConcuryLookup::apply(std::uint32_t vip, const ConcuryVipImage& image) {
  check(image);
  Owned& owned = owned_[vip];
  const bool in_place = blocks_ ? blocks_->image(vip).same_geometry(std::get<DcodeBlocksImage>(image.codes))
                                : owned.shape.same_geometry(std::get<OthelloImage>(image.codes).shape);
  if (!in_place) {
    // Another geometry: the caller guarantees no reader is inside (see the header).
    if (blocks_) {
      blocks_->apply(vip, std::get<DcodeBlocksImage>(image.codes));
      owned.dips = image.dips;
    } else {
      const OthelloImage& codes = std::get<OthelloImage>(image.codes);
      owned = {codes.shape, codes.cells, image.dips};
    }
    point(vip);
    decide_prefetch();
    return;
  }
  const InPlaceRewrite section(epochs_[vip], generation_);
  if (blocks_) {
    blocks_->apply(vip, std::get<DcodeBlocksImage>(image.codes));  // in place, under its own locks too
  } else {
    const OthelloImage& codes = std::get<OthelloImage>(image.codes);
    owned.shape.seed = codes.shape.seed;
    store_relaxed(hot_[vip].seed, codes.shape.seed);
    owned.cells.assign_words(codes.cells.words());
  }
  for (std::size_t d = 0; d < owned.dips.size(); ++d) store_relaxed(owned.dips[d], image.dips[d]);
}

template <class Width>
std::uint32_t ConcuryLookup::dcode_of(const Hot& vip, std::uint64_t key, Width width) {
  const std::uint64_t mask = (1ull << width.bits()) - 1;
  const OthelloCells c = othello_cells(seeded_hash(key, load_relaxed(vip.seed)), vip.size_a, vip.size_b);
  return static_cast<std::uint32_t>(PackedCells::packed_cell(vip.cells, c.a, width.bits(), mask) ^
                                    PackedCells::packed_cell(vip.cells, c.b, width.bits(), mask));
}

std::uint32_t ConcuryLookup::dcode_of_key(std::uint32_t vip, std::uint64_t key) const {
  if (blocks_) return blocks_->lookup(vip, key);
  return dcode_bits_ == kDefaultDcodeBits ? dcode_of(hot_[vip], key, FixedWidth<kDefaultDcodeBits>{})
                                          : dcode_of(hot_[vip], key, AnyWidth{dcode_bits_});
}

ConcuryLookup::Answer ConcuryLookup::answer(std::uint32_t vip, std::uint64_t key) const {
  for (;;) {
    const std::uint32_t epoch = __atomic_load_n(&epochs_[vip], __ATOMIC_ACQUIRE);
    if ((epoch & 1) != 0) continue;
    const std::uint32_t dcode = dcode_of_key(vip, key);
    const std::uint16_t dip = load_relaxed(hot_[vip].dips[dcode]);
    stripes_fence(std::memory_order_acquire);
    if (load_relaxed(epochs_[vip]) == epoch) return {dcode, dip};
  }
}

void ConcuryLookup::lookup_bulk(std::span<const LbQuery> queries, std::span<std::uint16_t> dips,
                                std::span<std::uint32_t> dcodes) const {
  if (blocks_) {
    bulk_blocks(queries, dips, dcodes);
  } else if (dcode_bits_ == kDefaultDcodeBits) {
    bulk(queries, dips, dcodes, FixedWidth<kDefaultDcodeBits>{});
  } else {
    bulk(queries, dips, dcodes, AnyWidth{dcode_bits_});
  }
}

template <class Width>
void ConcuryLookup::hash_pass(const LbQuery* q, std::size_t from, std::size_t n, ChunkCells& cells, Width width) const {
  for (std::size_t i = from; i < n; ++i) {
    const Hot& v = hot_[q[i].vip];
    const OthelloCells c = othello_cells(seeded_hash(q[i].key, load_relaxed(v.seed)), v.size_a, v.size_b);
    cells.a[i] = PackedCells::bit_address(v.cells, std::size_t{c.a} * width.bits());
    cells.b[i] = PackedCells::bit_address(v.cells, std::size_t{c.b} * width.bits());
    cells.row[i] = v.dips;
    if (prefetch_) {
      __builtin_prefetch(PackedCells::byte_at(cells.a[i]));
      __builtin_prefetch(PackedCells::byte_at(cells.b[i]));
    }
  }
}

template <class Width>
void ConcuryLookup::bulk(std::span<const LbQuery> queries, std::span<std::uint16_t> dips, std::span<std::uint32_t> dcodes,
                         Width width) const {
  const std::uint64_t mask = (1ull << width.bits()) - 1;
  const bool prefetch = prefetch_;  // read once: the loops below are compiled with and without it
  ChunkCells cells;
  std::uint32_t code[kChunk];
  for (std::size_t base = 0; base < queries.size(); base += kChunk) {
    const std::size_t n = std::min(kChunk, queries.size() - base);
    const LbQuery* q = queries.data() + base;
    std::uint16_t* out = dips.data() + base;
    const std::uint32_t generation = __atomic_load_n(&generation_, __ATOMIC_ACQUIRE);
    hash_pass(q, avx2_ ? hash_pass_avx2(q, n, cells) : 0, n, cells, width);
    // Unrolled: each key's work here is a handful of instructions, beside which the loop's own count
    // (llvm-mca, znver3: 3.6 -> 3.0 cycles a key).
#pragma GCC unroll 4
    for (std::size_t i = 0; i < n; ++i) {
      code[i] = static_cast<std::uint32_t>((PackedCells::bits_at(cells.a[i]) ^ PackedCells::bits_at(cells.b[i])) & mask);
      if (prefetch) __builtin_prefetch(cells.row[i] + code[i]);
    }
    rows_of_chunk(q, n, cells.row, code, out, generation);
    if (!dcodes.empty()) std::copy(code, code + n, dcodes.begin() + static_cast<std::ptrdiff_t>(base));
  }
}

void ConcuryLookup::bulk_blocks(std::span<const LbQuery> queries, std::span<std::uint16_t> dips,
                                std::span<std::uint32_t> dcodes) const {
  const std::uint16_t* rows[kChunk];
  std::uint32_t code[kChunk];
  for (std::size_t base = 0; base < queries.size(); base += kChunk) {
    const std::size_t n = std::min(kChunk, queries.size() - base);
    const LbQuery* q = queries.data() + base;
    const std::uint32_t generation = __atomic_load_n(&generation_, __ATOMIC_ACQUIRE);
    for (std::size_t i = 0; i < n; ++i) rows[i] = hot_[q[i].vip].dips;
    // The rows' entries prefetched by blocks_ as each Dcode is known, when prefetches pay.
    blocks_->lookup_bulk(queries.subspan(base, n), std::span(code, n),
                         prefetch_ ? std::span<const std::uint16_t* const>(rows, n) : std::span<const std::uint16_t* const>{});
    rows_of_chunk(q, n, rows, code, dips.data() + base, generation);
    if (!dcodes.empty()) std::copy(code, code + n, dcodes.begin() + static_cast<std::ptrdiff_t>(base));
  }
}

void ConcuryLookup::rows_of_chunk(const LbQuery* q, std::size_t n, const std::uint16_t* const* rows, std::uint32_t* code,
                                  std::uint16_t* out, std::uint32_t generation) const {
  for (std::size_t i = 0; i < n; ++i) out[i] = load_relaxed(rows[i][code[i]]);
  stripes_fence(std::memory_order_acquire);
  // A rewrite of some VIP raced with the chunk (rare): read the chunk again key by key.
  if (((generation & 1) | (load_relaxed(generation_) ^ generation)) != 0) {
    for (std::size_t i = 0; i < n; ++i) {
      const Answer again = answer(q[i].vip, q[i].key);
      out[i] = again.dip;
      code[i] = again.dcode;
    }
  }
}

ConcuryVipImage ConcuryLookup::image(std::uint32_t vip) const {
  if (blocks_) return {blocks_->image(vip), owned_[vip].dips};
  return {OthelloImage{owned_[vip].shape, owned_[vip].cells}, owned_[vip].dips};
}

std::size_t ConcuryLookup::bytes() const {
  std::size_t total = sizeof(*this) + hot_.size() * (sizeof(Hot) + sizeof(std::uint32_t)) + owned_.size() * sizeof(Owned);
  for (const Owned& v : owned_) total += v.cells.bytes() + v.dips.size() * sizeof(std::uint16_t);
  return total + (blocks_ ? blocks_->bytes() : 0);
}

}  // namespace flowtrack::compact
