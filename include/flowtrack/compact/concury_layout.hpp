// The two layouts of Concury's Othello arrays (ConcuryLookup, ConcuryControl::image):
//   pairs:  the thesis's, a key's two cells at independent places of arrays A and B: two cache lines a
//           lookup, with a vectorised first pass; the cheaper one while the arrays stay in cache;
//   blocks: both cells in one 64-byte block with its own seed (dcode_blocks.hpp): one line a lookup,
//           with a scalar first pass; the cheaper one once each line is a miss.
#pragma once

#include <cstddef>
#include <string_view>

namespace flowtrack::compact {

enum class ConcuryLayout { pairs, blocks };

constexpr std::string_view layout_name(ConcuryLayout layout) { return layout == ConcuryLayout::pairs ? "pairs" : "blocks"; }

// The layout for `connections` in all: blocks once the pairs layout's cells (2.33 cells a connection)
// would exceed the last-level cache one core can count on, kCoreCacheShare: measured on this project's
// machine (docs/performance/compact.md: random reads cost 3.4 cycles up to 4 MB, 4.3 at 8 MB, 8.3 at
// 12 MB), not read from the system, which reports a socket's L3 (or, in a VM, any figure). Measured
// crossover: pairs ahead at 1M connections (4.4 MB of cells), blocks at 4M (17.5 MB).
inline constexpr std::size_t kCoreCacheShare = std::size_t{8} << 20;
constexpr ConcuryLayout layout_for(std::size_t connections, unsigned dcode_bits) {
  const double pair_cell_bytes = 2.33 * dcode_bits * static_cast<double>(connections) / 8;
  return pair_cell_bytes > static_cast<double>(kCoreCacheShare) ? ConcuryLayout::blocks : ConcuryLayout::pairs;
}

}  // namespace flowtrack::compact
