// The code -> backend table shared by the load-balancer structures: 2^bits codes split into contiguous
// ranges, one per backend, sized in proportion to the weights (largest remainder; weight 0: no codes).
// A connection whose code is uniform over the codes then lands on backend i with odds w_i / sum w.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flowtrack/hash/seeded_hash.hpp"

namespace flowtrack::compact {

std::vector<std::uint16_t> weighted_code_table(std::span<const std::uint16_t> backends, std::span<const double> weights,
                                               unsigned code_bits);

// Gives each backend of `pinned` that has no code one code, the last of the then largest range (ranges
// stay contiguous). The table must hold at least one code per pinned backend.
void pin_codes(std::vector<std::uint16_t>& table, std::span<const std::uint16_t> pinned);

// Where each backend's codes start and how many it has, in the order of `backends`.
struct CodeRange {
  std::uint32_t first = 0, count = 0;
};
std::vector<CodeRange> code_ranges(std::span<const std::uint16_t> backends, std::span<const std::uint16_t> table);

// The baselines' choice for a new connection (a Maglev-style hash into the table): the entry the key's
// hash picks. The table has 2^k entries.
inline std::uint16_t hashed_pick(std::span<const std::uint16_t> table, std::uint64_t key) {
  constexpr std::uint64_t kPickSeed = 0x77;  // apart from the connection tables' hashes
  return table[seeded_hash(key, kPickSeed) & (table.size() - 1)];
}

}  // namespace flowtrack::compact
