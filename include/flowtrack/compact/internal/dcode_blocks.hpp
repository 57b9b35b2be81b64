// Dcode blocks: a blocked Othello mapping a connection's 4-tuple (one 64-bit word) to a Dcode, for
// Concury's data plane, laid out so that a lookup reads ONE cache line where Othello reads two (its
// two cells lie at independent random places, two DRAM lines a lookup once the arrays leave the cache).
//
// Layout. A VIP's image is `nblocks` blocks of one 64-byte line each, 64-byte aligned. A key k, with
// h = seeded_hash(k, seed) (the VIP's seed), belongs to block reduce(low 32 bits of h, nblocks). Its
// line holds, from bit 0 (little-endian words):
//   bits 0..7   the block's seed, found by the builder so that the block's graph is acyclic;
//   bit 8       the bumped flag: some keys of the block are answered by the overflow table instead;
//   bits 9..15  zero;
//   bit 16 on   cells of dcode_bits each, half_a cells of A then half_b of B (equal halves, or B one
//               more: a bipartite graph with equal sides holds the most random edges acyclic).
// With 12-bit cells: 41 cells (20 + 21) and 4 bits unused.
// The key's two cells come from g = a multiply mix of h and the block's seed: A's cell from g's high
// half, B's from its low half (multiply-high reductions). Its Dcode is
//   cell_a xor cell_b xor top_bits(h),     top_bits(h) = the top dcode_bits bits of h.
// The builder stores edge values Dcode xor top_bits(h), so a known key gets its Dcode back. The last
// xor is there for unknown keys: a block holds ~20 keys on 41 cells, a dense graph whose trees are big,
// so an unknown key's two cells often lie in one tree, and then cell_a xor cell_b is the xor of the
// edge values on the path between them, a function of known keys' Dcodes and not uniform (it is 0 in a
// tree whose keys all have Dcode 0). top_bits(h) is uniform and, the cells being drawn from a multiply
// mix of all of h that a reduction to ~5 bits leaves nearly independent of it, it makes the sum
// uniform whatever the graph.
// A cell is read by one unaligned 8-byte load inside the line and a shift, with no branch: an A cell
// (in the line's first half) loads from the byte of its first bit, a B cell (in its second half) loads
// the 8 bytes that end with the byte of its last bit. So no load reaches the next line, and none needs
// a clamp (which GCC compiled to a branch, mispredicted for a fifth of B's cells: 1K 102 -> 123 Mqps
// without it).
//
// Bumping. A block whose graph has a cycle under all 256 seeds keeps the seed with the fewest edges
// closing cycles and moves those keys to the overflow table: the exact (key, Dcode) pairs in an
// open-addressing table of the image, read-only for lookups. Lookups in a flagged block look there
// first (a rare branch); an unknown key of a flagged block, not found there, takes the block's answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "flowtrack/compact/compact_key.hpp"
#include "flowtrack/hash/seeded_hash.hpp"
#include "flowtrack/util/relaxed_atomic.hpp"

namespace flowtrack::compact {

// One block: a cache line of eight little-endian words (header in the low 16 bits of word 0).
struct alignas(64) DcodeLine {
  std::uint64_t words[8];
  friend bool operator==(const DcodeLine&, const DcodeLine&) = default;
};

inline constexpr unsigned kDcodeLineBits = 512;
inline constexpr unsigned kDcodeHeaderBits = 16;
inline constexpr unsigned kDcodeSeeds = 256;         // an 8-bit block seed
inline constexpr std::uint64_t kDcodeSeedMask = 0xff;
inline constexpr std::uint64_t kDcodeBumped = 0x100;  // the header's flag bit

// Where the 8-byte load of a cell starts in its line, and the shift after it. (The byte is a word, so
// that a constant subtracted from it becomes the load's displacement.)
struct DcodeCellLoad {
  std::size_t byte;
  unsigned shift;
};

// The cells of a line for a Dcode width (1..24).
struct DcodeGeometry {
  unsigned bits, half_a, half_b;
  constexpr explicit DcodeGeometry(unsigned dcode_bits)
      : bits(dcode_bits),
        half_a((kDcodeLineBits - kDcodeHeaderBits) / dcode_bits / 2),
        half_b((kDcodeLineBits - kDcodeHeaderBits) / dcode_bits - half_a) {}
  constexpr unsigned cells() const { return half_a + half_b; }
  constexpr std::uint64_t mask() const { return (std::uint64_t{1} << bits) - 1; }
  constexpr unsigned first_bit(unsigned cell) const { return kDcodeHeaderBits + cell * bits; }
  // A's cells end before bit 16 + 248 (half the cells of 1-bit ones): a load from their first byte
  // (<= 32) ends in the line.
  constexpr DcodeCellLoad load_a(unsigned cell) const { return {first_bit(cell) / 8, first_bit(cell) % 8}; }
  // B's cells start at bit 256 or later (16 + half_a * bits): the 8 bytes ending with a cell's last
  // byte start at or after byte 24, at or before the cell's first bit, and hold all its bits. They are
  // found from the cell's last bit `last`: they start at byte last / 8 - 7, and the cell at their bit
  // 56 + last % 8 - (bits - 1). (From the first bit and the byte after the cell, as this was written
  // before, GCC spent 4 more instructions a lookup on the same two numbers.)
  constexpr DcodeCellLoad load_b(unsigned cell) const {
    const unsigned last = first_bit(cell) + bits - 1;
    return {std::size_t{last / 8} - 7, last % 8 + 57 - bits};
  }
  constexpr DcodeCellLoad load_of(unsigned cell) const { return cell < half_a ? load_a(cell) : load_b(cell); }
};

// The bits of a line from a cell's first bit on (at least its own), unmasked.
inline std::uint64_t dcode_line_bits(const DcodeLine& line, DcodeCellLoad at) {
  return load_unaligned_relaxed(reinterpret_cast<const unsigned char*>(line.words) + at.byte) >> at.shift;
}

// The key's block.
inline std::uint32_t dcode_block_of(std::uint64_t h, std::uint32_t nblocks) { return reduce(low_half(h), nblocks); }

// The key's two cells in its block under the block's seed (B's offset by half_a): the seed spread over
// a word, xor-ed into h, then one 64x64 -> 128-bit multiply whose halves are folded together.
struct DcodeCells {
  unsigned a, b;
};
inline DcodeCells dcode_cells(std::uint64_t h, std::uint64_t block_seed, const DcodeGeometry& g) {
  constexpr std::uint64_t kSeedSpread = 0x9e3779b97f4a7c15ull, kCellMix = 0xd6e8feb86659fd93ull;
  const unsigned __int128 product = static_cast<unsigned __int128>(h ^ ((block_seed + 1) * kSeedSpread)) * kCellMix;
  const auto mixed = static_cast<std::uint64_t>(product >> 64) ^ static_cast<std::uint64_t>(product);
  return {reduce(high_half(mixed), g.half_a), g.half_a + reduce(low_half(mixed), g.half_b)};
}

// What a key's Dcode xors in besides its cells (see the header comment).
inline std::uint64_t dcode_key_bits(std::uint64_t h, unsigned dcode_bits) { return h >> (64 - dcode_bits); }

// The Dcode a line gives a key (the overflow table aside), from the line's header already read.
inline std::uint32_t dcode_from_line(const DcodeLine& line, std::uint64_t header, std::uint64_t h, const DcodeGeometry& g) {
  const DcodeCells c = dcode_cells(h, header & kDcodeSeedMask, g);
  return static_cast<std::uint32_t>(
      (dcode_line_bits(line, g.load_a(c.a)) ^ dcode_line_bits(line, g.load_b(c.b)) ^ dcode_key_bits(h, g.bits)) &
      g.mask());
}

// A slot of the overflow table. Invariant: `code` is the Dcode | kUsed in a used slot, 0 in a free one.
struct DcodeOverflowSlot {
  std::uint64_t key = 0;
  std::uint32_t code = 0;
  static constexpr std::uint32_t kUsed = 1u << 31;
  friend bool operator==(const DcodeOverflowSlot&, const DcodeOverflowSlot&) = default;
};

// The overflow table's answer for a key of hash h: linear probing from a slot taken from bits of h that
// neither the block (low 32 bits' top) nor the Dcode (top bits) use; `mask` = slots - 1 (a power of
// two, at most half used, so a probe ends at a free slot). A reader racing with an in-place copy may see
// a table fuller than that (old and new slots mixed; its validation rejects the answer): a probe stops
// after every slot.
inline std::size_t dcode_overflow_start(std::uint64_t h, std::size_t mask) { return (h >> 16) & mask; }
inline std::optional<std::uint32_t> dcode_overflow_find(const DcodeOverflowSlot* slots, std::size_t mask, std::uint64_t key,
                                                        std::uint64_t h) {
  std::size_t s = dcode_overflow_start(h, mask);
  for (std::size_t probed = 0; probed <= mask; ++probed, s = (s + 1) & mask) {
    const std::uint32_t code = load_relaxed(slots[s].code);
    if (code == 0) break;
    if (load_relaxed(slots[s].key) == key) return code & ~DcodeOverflowSlot::kUsed;
  }
  return std::nullopt;
}

// A key's Dcode from a VIP's arrays: the overflow table's answer in a flagged block when it holds the
// key, else the line's. Invariant (the builder's): a flagged block implies a non-empty table.
struct DcodeArrays {
  const DcodeLine* lines;
  const DcodeOverflowSlot* overflow;
  std::uint64_t seed;
  std::uint32_t nblocks;
  std::uint32_t overflow_mask;  // slots - 1
};
inline std::uint32_t dcode_of(const DcodeArrays& arrays, std::uint64_t key, const DcodeGeometry& g) {
  const std::uint64_t h = seeded_hash(key, arrays.seed);
  const DcodeLine& line = arrays.lines[dcode_block_of(h, arrays.nblocks)];
  const std::uint64_t header = load_relaxed(line.words[0]);
  if ((header & kDcodeBumped) != 0) {
    if (const auto code = dcode_overflow_find(arrays.overflow, arrays.overflow_mask, key, h)) return *code;
  }
  return dcode_from_line(line, header, h, g);
}

// One VIP's image: what the builder makes and a lookup structure copies.
struct DcodeBlocksImage {
  unsigned dcode_bits = 12;
  std::uint64_t seed = 0;                  // the VIP's hash seed
  std::vector<DcodeLine> lines;            // one per block, at least one
  std::vector<DcodeOverflowSlot> overflow;  // empty, or a power of two of slots

  std::uint32_t nblocks() const { return static_cast<std::uint32_t>(lines.size()); }
  // Everything but the contents: an image of the same geometry can be copied over another in place.
  bool same_geometry(const DcodeBlocksImage& o) const {
    return dcode_bits == o.dcode_bits && seed == o.seed && lines.size() == o.lines.size() && overflow.size() == o.overflow.size();
  }
  DcodeArrays arrays() const {
    return {lines.data(), overflow.data(), seed, nblocks(), static_cast<std::uint32_t>(overflow.size() - 1)};
  }
  // The key's Dcode (with no concurrent writer).
  std::uint32_t lookup(std::uint64_t key) const { return dcode_of(arrays(), key, DcodeGeometry(dcode_bits)); }
  std::size_t bumped() const;          // keys in the overflow table
  std::size_t flagged_blocks() const;  // blocks with the bumped flag
  // Memory: 512 bits a block plus 128 a slot of the overflow table.
  std::size_t bytes() const { return lines.size() * sizeof(DcodeLine) + overflow.size() * sizeof(DcodeOverflowSlot); }
  friend bool operator==(const DcodeBlocksImage&, const DcodeBlocksImage&) = default;
};

}  // namespace flowtrack::compact
