// The two layouts of Concury's Othello arrays (ConcuryLookup, ConcuryControl::image):
//   pairs:  the thesis's, a key's two cells at independent places of arrays A and B: two cache lines a
//           lookup, with a vectorised first pass; the cheaper one while the arrays stay in cache;
//   blocks: both cells in one 64-byte block with its own seed (dcode_blocks.hpp): one line a lookup,
//           with a scalar first pass; the cheaper one once each line is a miss.
#pragma once

#include <string_view>

namespace flowtrack::compact {

enum class ConcuryLayout { pairs, blocks };

constexpr std::string_view layout_name(ConcuryLayout layout) { return layout == ConcuryLayout::pairs ? "pairs" : "blocks"; }

}  // namespace flowtrack::compact
