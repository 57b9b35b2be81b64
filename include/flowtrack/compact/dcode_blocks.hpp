// Concury's Dcode -> DIP row as its data plane holds it: a block entry per 2^shift Dcodes (the Dcode's
// top bits, at most 64 blocks), then the row itself. The control plane gives each DIP one contiguous
// range of Dcodes (weighted_codes.hpp), so most blocks lie inside one DIP's range; a block entry holds
// that DIP, and a lookup answers from it without reading the row. A block spanning two or more DIPs
// holds kMixed and sends the lookup on to the row. The block entries of a VIP are one or two cache
// lines, where its row is 8 KiB: a burst over many VIPs keeps them in the L1 and leaves the row's lines
// alone unless a Dcode falls in a mixed block.
//
// Invariant: for every Dcode d, table[dcode_entry(table, d, bits)] == row[d] (a block of Dcodes that all
// have the DIP kMixed is marked mixed, which the row answers the same). Answers are the row's bit for bit.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/util/relaxed_atomic.hpp"

namespace flowtrack::compact {

struct DcodeBlocks {
  static constexpr unsigned kMaxBlockBits = 6;  // 64 block entries: two cache lines of 16-bit DIPs
  static constexpr std::uint16_t kMixed = 0xffff;

  static constexpr unsigned block_bits(unsigned dcode_bits) { return std::min(dcode_bits, kMaxBlockBits); }
  static constexpr unsigned shift(unsigned dcode_bits) { return dcode_bits - block_bits(dcode_bits); }
  static constexpr std::size_t blocks(unsigned dcode_bits) { return std::size_t{1} << block_bits(dcode_bits); }

  // The block entries of `row` (2^dcode_bits DIPs), then the row: what table() must hold.
  static std::vector<std::uint16_t> table(std::span<const std::uint16_t> row, unsigned dcode_bits) {
    const unsigned s = shift(dcode_bits);
    std::vector<std::uint16_t> t(blocks(dcode_bits) + row.size());
    for (std::size_t b = 0; b < blocks(dcode_bits); ++b) {
      const auto first = row.begin() + static_cast<std::ptrdiff_t>(b << s);
      const bool one_dip = std::all_of(first, first + (std::ptrdiff_t{1} << s), [&](std::uint16_t dip) { return dip == *first; });
      t[b] = one_dip ? *first : kMixed;
    }
    std::copy(row.begin(), row.end(), t.begin() + static_cast<std::ptrdiff_t>(blocks(dcode_bits)));
    return t;
  }

  // Where in the table Dcode d's DIP is: its block entry, or its row entry when the block is mixed.
  // One relaxed load (the entry may change under a reader, who validates with the structure's
  // sequence locks) and a conditional move, not a branch: with unequal weights a burst's Dcodes fall
  // in mixed blocks at random, and GCC turns the plain conditional here into a branch.
  static std::size_t entry(const std::uint16_t* table, std::uint32_t dcode, unsigned dcode_bits) {
    const std::size_t block = dcode >> shift(dcode_bits);
    return select(load_relaxed(table[block]) == kMixed, blocks(dcode_bits) + dcode, block);
  }

 private:
  static std::size_t select(bool condition, std::size_t if_true, std::size_t if_false) {
#if defined(__x86_64__)
    asm("test %[c], %[c]\n\tcmovnz %[t], %[f]" : [f] "+r"(if_false) : [c] "r"(condition), [t] "rm"(if_true) : "cc");
    return if_false;
#else
    return condition ? if_true : if_false;
#endif
  }
};

}  // namespace flowtrack::compact
