#include "flowtrack/nf/maglev.hpp"

#include <algorithm>
#include <stdexcept>

#include "flowtrack/hash/seeded_hash.hpp"

namespace flowtrack {

bool is_prime(std::uint32_t n) {
  if (n < 2) return false;
  for (std::uint32_t d = 2; static_cast<std::uint64_t>(d) * d <= n; ++d) {
    if (n % d == 0) return false;
  }
  return true;
}

MaglevTable::MaglevTable(std::uint32_t size) : entries_(size, kNoBackend) {
  if (size < 3 || !is_prime(size)) throw std::invalid_argument("maglev: the table size must be a prime >= 3");
}

void MaglevTable::populate(std::span<const Backend> backends) {
  const std::uint32_t m = size();
  std::fill(entries_.begin(), entries_.end(), kNoBackend);
  std::uint32_t max_weight = 0;
  for (const Backend& b : backends) max_weight = std::max(max_weight, b.weight);
  if (max_weight == 0) return;
  // A backend's walk along its permutation: `at` is its next entry, offset + j * skip (mod m) after j
  // steps, kept by adding skip (< m) and subtracting m once over, which is the same sequence without a
  // division per step (the walks take about m ln m steps in all: most of a large table's build).
  struct Walk {
    std::uint32_t at, skip;
  };
  std::vector<Walk> walks;
  walks.reserve(backends.size());
  for (const Backend& b : backends) {
    const std::span<const std::uint8_t> name(reinterpret_cast<const std::uint8_t*>(b.name.data()), b.name.size());
    walks.push_back({static_cast<std::uint32_t>(seeded_hash(name, 0x6d61676c6576ull) % m),
                     static_cast<std::uint32_t>(seeded_hash(name, 0x736b6970ull) % (m - 1)) + 1});
  }
  // Round r brings backend i's count to floor(r * weight / max_weight): the heaviest backend claims an
  // entry every round, every other one in its proportion of the rounds (never more than one a round),
  // so shares follow the weights even when a weight exceeds the table size. At most m rounds run
  // (the heaviest claims one in each); r * weight <= 2^32 * 2^32 fits in 64 bits.
  // The turns within a round go by name, not by index: where two permutations want the same free
  // entry, the earlier turn takes it, and a name's turn is then the same in every listing of the pool.
  std::vector<std::uint32_t> turns(backends.size());
  for (std::uint32_t i = 0; i < turns.size(); ++i) turns[i] = i;
  std::ranges::stable_sort(turns, [&](std::uint32_t a, std::uint32_t b) { return backends[a].name < backends[b].name; });
  std::uint32_t filled = 0;
  for (std::uint64_t round = 1; filled < m; ++round) {
    for (std::size_t turn = 0; turn < turns.size() && filled < m; ++turn) {
      const std::uint32_t i = turns[turn];
      const std::uint64_t weight = backends[i].weight;
      if (round * weight / max_weight == (round - 1) * weight / max_weight) continue;  // not its turn
      Walk& w = walks[i];
      // The next free entry on this backend's permutation; the permutation covers every entry and one
      // is still free, so this ends within m steps.
      std::uint32_t entry;
      do {
        entry = w.at;
        w.at = w.at >= m - w.skip ? w.at - (m - w.skip) : w.at + w.skip;
      } while (entries_[entry] != kNoBackend);
      entries_[entry] = i;
      ++filled;
    }
  }
}

}  // namespace flowtrack
