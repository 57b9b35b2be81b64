// The builder of Dcode blocks (dcode_blocks.hpp): from a VIP's (4-tuple, Dcode) pairs, one image.
//
// Each block is solved alone: its keys are the edges of a bipartite graph on its cells; the builder
// tries block seeds until the graph is acyclic (union-find), then fills each tree from a root given a
// random value, setting each far cell to near cell xor the edge's value; free cells get random values.
// When no seed of the 256 makes the graph acyclic, the seed with the fewest cycle-closing edges is kept
// and those keys are bumped to the overflow table (dcode_blocks.hpp). The random values of a block come
// from (fill_seed, block), so a block's contents depend on its own keys only.
//
// Stability across rebuilds (what Concury's consistency for connections not yet known needs):
// rebuild() keeps every block of the image in use, bit for bit (seed, cells, flag), in which every known
// key already gets its Dcode, and solves again only the others, trying their seed in use first and
// giving each tree's root its cell in use. So an unknown connection keeps its Dcode unless its block
// changed, and even then unless its block changed seed or a cell of it lies in a tree whose edges
// changed. Connections learnt with the Dcodes the image gave them, and connections that ended, change
// no block: only new Dcodes of known connections (a pool or weight change) do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "flowtrack/compact/internal/dcode_blocks.hpp"

namespace flowtrack::compact {

struct DcodePair {
  std::uint64_t key;
  std::uint32_t dcode;  // < 2^dcode_bits
};

// Cells per key (A's and B's together) that dcode_blocks_for aims at by default: 20.5 keys a block of
// 41 12-bit cells, 25.0 bits a key (classic Othello: 2.33 cells, 28 bits). A seed searched per block
// holds a denser graph acyclic than one seed for the whole array: measured over 128 VIPs of 1M and 4M
// keys, 0.2 % of the blocks flagged and 0.012 % of the keys bumped at 2.0 cells a key (0.02 % and
// 0.001 % at 2.33, 29.1 bits a key; 0.9 % and 0.05 % at 1.8).
inline constexpr double kDcodeCellsPerKey = 2.0;

// Blocks for `keys` keys of `dcode_bits`-bit Dcodes at `cells_per_key` cells a key (at least one).
// Memory (DcodeBlocksImage::bytes): 512 bits a block, so 512 * cells_per_key / cells bits a key (24.98
// for 12-bit Dcodes at 2.0: 41 cells), plus 128 bits a slot of the overflow table, 2 to 4 slots a
// bumped key (0.003 to 0.006 bits a key at 0.012 % of the keys bumped).
std::uint32_t dcode_blocks_for(std::size_t keys, unsigned dcode_bits, double cells_per_key = kDcodeCellsPerKey);

// An image of `nblocks` blocks holding the pairs (distinct keys), hashed with `seed`.
DcodeBlocksImage build_dcode_blocks(std::span<const DcodePair> pairs, std::uint32_t nblocks, unsigned dcode_bits,
                                    std::uint64_t seed, std::uint64_t fill_seed);

// The pairs (distinct keys) in an image of in_use's geometry (blocks, width, seed), keeping the blocks
// in use that already answer all their keys. The overflow table keeps its size while the bumped keys
// fit in half of it, so the result is most often of in_use's geometry: copied in place.
DcodeBlocksImage rebuild_dcode_blocks(const DcodeBlocksImage& in_use, std::span<const DcodePair> pairs);

}  // namespace flowtrack::compact
